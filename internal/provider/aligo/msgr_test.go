package aligo

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider"
	"github.com/notifyd/notifyd/internal/provider/providertest"
)

const (
	pathToken = "/akv10/token/create/30/s/"
	pathSend  = "/akv10/alimtalk/send/"
	okToken   = `{"code":0,"message":"정상적으로 생성하였습니다.","token":"` + testToken + `","urlencode":"` + testToken + `"}`
	okAlim    = `{"code":0,"message":"성공적으로 전송요청 하였습니다.","info":{"type":"AT","mid":"445566","current":"100","unit":6.5,"total":6.5,"scnt":1,"fcnt":0}}`
)

// alimReply answers the token call with okToken and sends with send.
func alimReply(send string) func(captured) (int, string) {
	return func(r captured) (int, string) {
		if r.Path == pathToken {
			return http.StatusOK, okToken
		}
		return http.StatusOK, send
	}
}

func alimMsg(to string) provider.Message {
	return provider.Message{
		ID: "n-" + to, Channel: notify.ChannelAlimTalk, To: to, ToName: "홍길동", Title: "주문 안내",
		Text: "홍길동님, 주문이 접수되었습니다.", TemplateCode: "order_received",
		VendorTemplateID: "TK_1234", SenderProfileKey: "sk-profile-1",
	}
}

func TestMsgrSendSingle(t *testing.T) {
	t.Parallel()
	f := newFake(t, alimReply(okAlim))
	p := newMsgrProvider(t, f, newClock())

	res := p.Send(context.Background(), []provider.Message{alimMsg("01011112222")})
	require.Len(t, res, 1)
	require.Nil(t, res[0].Err)
	require.Equal(t, "445566", res[0].MessageID)
	requireNoSecrets(t, res[0].Exchange)
	logged := res[0].Exchange.Request.(map[string]string)
	require.Equal(t, "[redacted]", logged["apikey"])
	require.Equal(t, "[redacted]", logged["token"])

	tok := f.requests(pathToken)
	require.Len(t, tok, 1)
	require.Equal(t, testMsgrKey, tok[0].Form.Get("apikey"))
	require.Equal(t, testUserID, tok[0].Form.Get("userid"))
	golden(t, "msgr_token", tok[0])

	send := f.requests(pathSend)
	require.Len(t, send, 1)
	form := send[0].Form
	require.Equal(t, testMsgrKey, form.Get("apikey"))
	require.Equal(t, testUserID, form.Get("userid"))
	require.Equal(t, testToken, form.Get("token"))
	require.Equal(t, "sk-profile-1", form.Get("senderkey"))
	require.Equal(t, "TK_1234", form.Get("tpl_code"))
	require.Equal(t, testSender, form.Get("sender"))
	require.Equal(t, "01011112222", form.Get("receiver_1"))
	require.Equal(t, "홍길동", form.Get("recvname_1"))
	require.Equal(t, "주문 안내", form.Get("subject_1"))
	require.Equal(t, "홍길동님, 주문이 접수되었습니다.", form.Get("message_1"))
	require.False(t, form.Has("failover"), "native SMS fallback must stay off")
	golden(t, "msgr_send", send[0])
}

func TestMsgrSendBatch(t *testing.T) {
	t.Parallel()
	f := newFake(t, alimReply(`{"code":"0","message":"ok","info":{"type":"AT","mid":778899,"scnt":3,"fcnt":0}}`))
	p := newMsgrProvider(t, f, newClock())

	res := p.Send(context.Background(), []provider.Message{alimMsg("01000000001"), alimMsg("01000000002"), alimMsg("01000000003")})
	for i, r := range res {
		require.Nil(t, r.Err)
		require.Equal(t, fmt.Sprintf("778899-%d", i+1), r.MessageID)
	}
	send := f.requests(pathSend)
	require.Len(t, send, 1)
	require.Equal(t, "01000000003", send[0].Form.Get("receiver_3"))
	require.False(t, send[0].Form.Has("receiver_4"))
	golden(t, "msgr_send_batch", send[0])
}

func TestMsgrGroupsByTemplate(t *testing.T) {
	t.Parallel()
	f := newFake(t, alimReply(okAlim))
	p := newMsgrProvider(t, f, newClock())

	other := alimMsg("01000000002")
	other.VendorTemplateID = "" // falls back to the template code
	res := p.Send(context.Background(), []provider.Message{alimMsg("01000000001"), other, alimMsg("01000000003")})
	for _, r := range res {
		require.Nil(t, r.Err)
	}
	send := f.requests(pathSend)
	require.Len(t, send, 2)
	require.Equal(t, "TK_1234", send[0].Form.Get("tpl_code"))
	require.Equal(t, "01000000003", send[0].Form.Get("receiver_2"))
	require.Equal(t, "order_received", send[1].Form.Get("tpl_code"))
	require.Equal(t, "01000000002", send[1].Form.Get("receiver_1"))
	require.Equal(t, "445566-1", res[0].MessageID)
	require.Equal(t, "445566", res[1].MessageID)
	require.Equal(t, "445566-2", res[2].MessageID)
}

func TestMsgrMissingTemplateData(t *testing.T) {
	t.Parallel()
	f := newFake(t, alimReply(okAlim))
	p := newMsgrProvider(t, f, newClock())

	noProfile := alimMsg("01000000001")
	noProfile.SenderProfileKey = ""
	noTemplate := alimMsg("01000000002")
	noTemplate.VendorTemplateID, noTemplate.TemplateCode = "", ""
	res := p.Send(context.Background(), []provider.Message{noProfile, noTemplate})
	for _, r := range res {
		require.NotNil(t, r.Err)
		require.Equal(t, notify.FailureInvalidRequest, r.Err.Code)
	}
	require.Empty(t, f.requests(pathToken))
	require.Empty(t, f.requests(pathSend))
}

func TestMsgrTokenCached(t *testing.T) {
	t.Parallel()
	f := newFake(t, alimReply(okAlim))
	c := newClock()
	p := newMsgrProvider(t, f, c)

	var wg sync.WaitGroup
	errs := make([]*provider.Error, 5)
	for i := range errs {
		wg.Go(func() {
			errs[i] = p.Send(context.Background(), []provider.Message{alimMsg(fmt.Sprintf("0100000000%d", i))})[0].Err
		})
	}
	wg.Wait()
	for _, e := range errs {
		require.Nil(t, e)
	}
	require.Len(t, f.requests(pathToken), 1, "concurrent sends share one token")

	c.Add(tokenLifetime - tokenMargin - time.Second)
	require.Nil(t, p.Send(context.Background(), []provider.Message{alimMsg("01011112222")})[0].Err)
	require.Len(t, f.requests(pathToken), 1, "token still fresh")

	c.Add(time.Second)
	require.Nil(t, p.Send(context.Background(), []provider.Message{alimMsg("01011112222")})[0].Err)
	require.Len(t, f.requests(pathToken), 2, "token renewed before it expires")
}

func TestMsgrTokenRefreshOnCode(t *testing.T) {
	t.Parallel()
	for _, code := range []int{-10, -107} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			t.Parallel()
			var sends atomic.Int32
			f := newFake(t, func(r captured) (int, string) {
				if r.Path == pathToken {
					return http.StatusOK, okToken
				}
				if sends.Add(1) == 1 {
					return http.StatusOK, fmt.Sprintf(`{"code":%d,"message":"token error"}`, code)
				}
				return http.StatusOK, okAlim
			})
			p := newMsgrProvider(t, f, newClock())
			res := p.Send(context.Background(), []provider.Message{alimMsg("01011112222")})
			require.Nil(t, res[0].Err)
			require.Equal(t, "445566", res[0].MessageID)
			require.Len(t, f.requests(pathToken), 2)
			require.Len(t, f.requests(pathSend), 2)
		})
	}
}

func TestMsgrTokenRefreshOnlyOnce(t *testing.T) {
	t.Parallel()
	f := newFake(t, alimReply(`{"code":-107,"message":"token error"}`))
	p := newMsgrProvider(t, f, newClock())
	res := p.Send(context.Background(), []provider.Message{alimMsg("01011112222")})
	require.NotNil(t, res[0].Err)
	require.Equal(t, notify.FailureUnknown, res[0].Err.Code)
	require.Len(t, f.requests(pathToken), 2)
	require.Len(t, f.requests(pathSend), 2)
}

func TestMsgrTokenFailure(t *testing.T) {
	t.Parallel()
	f := newFake(t, func(r captured) (int, string) {
		return http.StatusOK, `{"code":-101,"message":"인증오류"}`
	})
	p := newMsgrProvider(t, f, newClock())
	res := p.Send(context.Background(), []provider.Message{alimMsg("01011112222"), alimMsg("01011113333")})
	for _, r := range res {
		require.NotNil(t, r.Err)
		require.Equal(t, notify.FailureUnauthorized, r.Err.Code)
		require.Equal(t, pathToken, r.Exchange.URL[len(f.URL):])
		requireNoSecrets(t, r.Exchange)
	}
	require.Empty(t, f.requests(pathSend))
}

func TestMsgrResultCodes(t *testing.T) {
	t.Parallel()
	for _, tc := range codeCases {
		t.Run(fmt.Sprint(tc.code), func(t *testing.T) {
			t.Parallel()
			f := newFake(t, alimReply(fmt.Sprintf(`{"code":%d,"message":"실패"}`, tc.code)))
			res := newMsgrProvider(t, f, newClock()).Send(context.Background(), []provider.Message{alimMsg("01011112222")})
			require.NotNil(t, res[0].Err)
			require.Equal(t, tc.want, res[0].Err.Code)
			require.Equal(t, tc.final, res[0].Err.Final)
		})
	}
}

func TestMsgrAnswerEdgeCases(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, body string
	}{
		{"no code is not success", `{"message":"?"}`},
		{"every recipient rejected", `{"code":0,"message":"ok","info":{"mid":1,"scnt":0,"fcnt":1}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, alimReply(tc.body))
			res := newMsgrProvider(t, f, newClock()).Send(context.Background(), []provider.Message{alimMsg("01011112222")})
			require.NotNil(t, res[0].Err)
			require.Equal(t, notify.FailureUnknown, res[0].Err.Code)
		})
	}
}

func TestMsgrQuotaUsesMsgrKey(t *testing.T) {
	t.Parallel()
	f := newFake(t, func(captured) (int, string) {
		return http.StatusOK, `{"result_code":"1","message":"","SMS_CNT":"10","LMS_CNT":"5","MMS_CNT":"1"}`
	})
	q, err := newMsgrProvider(t, f, newClock()).Quota(context.Background())
	require.NoError(t, err)
	require.Equal(t, provider.Quota{Period: "current", RemainingCredit: 16, Currency: "count"}, q)
	reqs := f.requests("/remain/")
	require.Len(t, reqs, 1)
	require.Equal(t, testMsgrKey, reqs[0].Form.Get("key"))
}

func TestMsgrTimeout(t *testing.T) {
	t.Parallel()
	f := newFake(t, func(r captured) (int, string) {
		if r.Path == pathToken {
			return http.StatusOK, okToken
		}
		time.Sleep(500 * time.Millisecond)
		return http.StatusOK, okAlim
	})
	p, err := MsgrKind().New(msgrConfig(f.URL), provider.Deps{HTTP: providertest.Client(100 * time.Millisecond)})
	require.NoError(t, err)
	res := p.Send(context.Background(), []provider.Message{alimMsg("01011112222")})
	require.NotNil(t, res[0].Err)
	require.Equal(t, notify.FailureTemporaryUnavailable, res[0].Err.Code)
}
