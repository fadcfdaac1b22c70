package aligo

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider"
	"github.com/notifyd/notifyd/internal/provider/providertest"
)

func TestKinds(t *testing.T) {
	t.Parallel()
	batch := provider.BatchDefaults{CallsPerSecond: 2, Window: 800 * time.Millisecond, MaxSize: 500}
	providertest.RequireKind(t, SMSKind(), providertest.KindWant{ID: "vendora_sms", Channel: notify.ChannelSMS, Required: []string{"vendora_user_id", "vendora_api_key", "vendora_sender"}, Optional: []string{"base_url"}, Batch: batch})
	providertest.RequireKind(t, MsgrKind(), providertest.KindWant{ID: "vendora_msgr", Channel: notify.ChannelAlimTalk, Required: []string{"vendora_user_id", "vendora_msgr_api_key", "vendora_sender"}, Optional: []string{"vendora_api_key", "base_url"}, Batch: batch})
}

// TestNewMissingKey: each required key left out or empty is named (with
// no vendora_api_key to fall back on, the msgr key is missing too), and
// the msgr key does not stand in for the sms key.
func TestNewMissingKey(t *testing.T) {
	t.Parallel()
	providertest.RequireEachRequired(t, SMSKind(), provider.Config{keyUserID: "u", keyAPIKey: "k", keySender: "s"})
	providertest.RequireEachRequired(t, MsgrKind(), provider.Config{keyUserID: "u", keyMsgrAPIKey: "k", keySender: "s"})
	providertest.RequireInvalid(t, SMSKind(), provider.Config{keyUserID: "u", keyMsgrAPIKey: "k", keySender: "s"}, keyAPIKey)
}

func TestNewMsgrKeyFallback(t *testing.T) {
	t.Parallel()
	p, err := MsgrKind().New(provider.Config{keyUserID: "u", keyAPIKey: "shared", keySender: "s"}, provider.Deps{})
	require.NoError(t, err)
	require.Equal(t, "shared", p.(*msgrProvider).apiKey)

	p, err = MsgrKind().New(provider.Config{keyUserID: "u", keyAPIKey: "shared", keyMsgrAPIKey: "own", keySender: "s"}, provider.Deps{})
	require.NoError(t, err)
	require.Equal(t, "own", p.(*msgrProvider).apiKey)
}

func TestBaseURL(t *testing.T) {
	t.Parallel()
	p, err := SMSKind().New(smsConfig(""), provider.Deps{})
	require.NoError(t, err)
	require.Equal(t, "https://apis.aligo.in", p.(*smsProvider).smsRoot)
	require.Equal(t, "https://kakaoapi.aligo.in", p.(*smsProvider).msgrRoot)

	// One base_url serves both hosts; its path is ignored.
	p, err = MsgrKind().New(msgrConfig("http://127.0.0.1:9090/ignored"), provider.Deps{})
	require.NoError(t, err)
	require.Equal(t, "http://127.0.0.1:9090", p.(*msgrProvider).smsRoot)
	require.Equal(t, "http://127.0.0.1:9090", p.(*msgrProvider).msgrRoot)

	_, err = SMSKind().New(smsConfig("apis.aligo.in"), provider.Deps{})
	var perr *provider.Error
	require.True(t, errors.As(err, &perr))
	require.Equal(t, notify.FailureInvalidRequest, perr.Code)
}

func TestSMSSendSingle(t *testing.T) {
	t.Parallel()
	f := newFake(t, func(captured) (int, string) { return http.StatusOK, okSend })
	p := newSMSProvider(t, f)

	res := p.Send(context.Background(), []provider.Message{{ID: "n1", To: "01011112222", Title: "ignored for SMS", Text: "인증번호 123456"}})
	require.Len(t, res, 1)
	require.Nil(t, res[0].Err)
	require.Equal(t, "123456789", res[0].MessageID)
	require.Equal(t, http.StatusOK, res[0].Exchange.Response.HTTPStatus)
	requireNoSecrets(t, res[0].Exchange)
	require.Equal(t, "[redacted]", res[0].Exchange.Request.(map[string]string)["key"])

	reqs := f.requests("/send/")
	require.Len(t, reqs, 1)
	form := reqs[0].Form
	require.Equal(t, testAPIKey, form.Get("key"))
	require.Equal(t, testUserID, form.Get("user_id"))
	require.Equal(t, testSender, form.Get("sender"))
	require.Equal(t, "01011112222", form.Get("receiver"))
	require.Equal(t, "인증번호 123456", form.Get("msg"))
	require.Equal(t, "SMS", form.Get("msg_type"))
	require.False(t, form.Has("title"))
	golden(t, "sms_send", reqs[0])
}

func TestSMSSendLMS(t *testing.T) {
	t.Parallel()
	f := newFake(t, func(captured) (int, string) { return http.StatusOK, okSend })
	p := newSMSProvider(t, f)

	// 46 Hangul syllables are 92 bytes in EUC-KR: one byte over an SMS.
	long := strings.Repeat("가", 46)
	res := p.Send(context.Background(), []provider.Message{{To: "01011112222", Title: "안내", Text: long}})
	require.Nil(t, res[0].Err)
	form := f.requests("/send/")[0].Form
	require.Equal(t, "LMS", form.Get("msg_type"))
	require.Equal(t, "안내", form.Get("title"))

	// 45 syllables (90 bytes) still fit an SMS although UTF-8 needs 135.
	res = p.Send(context.Background(), []provider.Message{{To: "01011112222", Text: strings.Repeat("가", 45)}})
	require.Nil(t, res[0].Err)
	require.Equal(t, "SMS", f.requests("/send/")[1].Form.Get("msg_type"))
}

func TestSMSSendMass(t *testing.T) {
	t.Parallel()
	f := newFake(t, func(captured) (int, string) {
		return http.StatusOK, `{"result_code":1,"message":"success","msg_id":987654,"success_cnt":3,"error_cnt":0,"msg_type":"LMS"}`
	})
	p := newSMSProvider(t, f)

	msgs := []provider.Message{
		{ID: "n1", To: "01011110001", Text: "first"},
		{ID: "n2", To: "01011110002", Title: "Notice", Text: strings.Repeat("long text ", 10)},
		{ID: "n3", To: "01011110003", Title: "Other", Text: "third"},
	}
	res := p.Send(context.Background(), msgs)
	require.Len(t, res, 3)
	for i, r := range res {
		require.Nil(t, r.Err)
		require.Equal(t, fmt.Sprintf("987654-%d", i+1), r.MessageID)
		requireNoSecrets(t, r.Exchange)
	}
	require.Empty(t, f.requests("/send/"))
	reqs := f.requests("/send_mass/")
	require.Len(t, reqs, 1)
	form := reqs[0].Form
	require.Equal(t, "3", form.Get("cnt"))
	require.Equal(t, "LMS", form.Get("msg_type"))
	require.Equal(t, "Notice", form.Get("title"))
	require.Equal(t, "01011110002", form.Get("rec_2"))
	require.Equal(t, "third", form.Get("msg_3"))
	golden(t, "sms_send_mass", reqs[0])
}

func TestSMSSendMassSplitsAt500(t *testing.T) {
	t.Parallel()
	f := newFake(t, func(r captured) (int, string) {
		return http.StatusOK, fmt.Sprintf(`{"result_code":"1","message":"success","msg_id":"%s"}`, strings.Trim(r.Path, "/"))
	})
	p := newSMSProvider(t, f)
	msgs := make([]provider.Message, 501)
	for i := range msgs {
		msgs[i] = provider.Message{To: fmt.Sprintf("0101111%04d", i), Text: "hi"}
	}
	res := p.Send(context.Background(), msgs)
	require.Len(t, f.requests("/send_mass/"), 1)
	require.Equal(t, "500", f.requests("/send_mass/")[0].Form.Get("cnt"))
	require.Len(t, f.requests("/send/"), 1)
	require.Equal(t, "send_mass-500", res[499].MessageID)
	require.Equal(t, "send", res[500].MessageID)
}

func TestSMSRejectsEmptyBeforeCalling(t *testing.T) {
	t.Parallel()
	f := newFake(t, func(captured) (int, string) { return http.StatusOK, okSend })
	p := newSMSProvider(t, f)
	res := p.Send(context.Background(), []provider.Message{{To: "", Text: "x"}, {To: "010", Text: ""}, {To: "01011112222", Text: "ok"}})
	require.Equal(t, notify.FailureInvalidRequest, res[0].Err.Code)
	require.Equal(t, notify.FailureInvalidRequest, res[1].Err.Code)
	require.Nil(t, res[2].Err)
	require.Len(t, f.requests("/send/"), 1)
}

type codeCase struct {
	code  int64
	want  notify.FailureCode
	final bool
}

// codeCases pins every row of the codes table, plus an unlisted code.
var codeCases = []codeCase{
	{-201, notify.FailureCreditExhausted, true},
	{-101, notify.FailureUnauthorized, false},
	{-1, notify.FailureUnauthorized, false},
	{-301, notify.FailureInvalidRequest, false},
	{-302, notify.FailureInvalidRequest, false},
	{-105, notify.FailureInvalidRequest, false},
	{-10, notify.FailureUnknown, false},
	{-107, notify.FailureUnknown, false},
	{-999, notify.FailureUnknown, false},
}

func TestCodeCasesCoverTable(t *testing.T) {
	t.Parallel()
	providertest.RequireCovered(t, codes, codeCases, func(c codeCase) int64 { return c.code })
}

func TestSMSResultCodes(t *testing.T) {
	t.Parallel()
	for i, tc := range codeCases {
		t.Run(fmt.Sprint(tc.code), func(t *testing.T) {
			t.Parallel()
			// Alternate string and number encodings: Aligo sends both.
			rc := fmt.Sprintf("%d", tc.code)
			if i%2 == 0 {
				rc = `"` + rc + `"`
			}
			f := newFake(t, func(captured) (int, string) {
				return http.StatusOK, `{"result_code":` + rc + `,"message":"실패"}`
			})
			p := newSMSProvider(t, f)
			res := p.Send(context.Background(), []provider.Message{{To: "01011112222", Text: "a"}, {To: "01011113333", Text: "b"}})
			for _, r := range res {
				require.NotNil(t, r.Err)
				require.Equal(t, tc.want, r.Err.Code)
				require.Equal(t, tc.final, r.Err.Final)
				require.Empty(t, r.MessageID)
				require.Contains(t, r.Err.Message, "실패")
			}
			if tc.code == -201 {
				require.False(t, res[0].Err.FallsBack(), "SPEC: -201 does not fall back")
			}
		})
	}
}

func TestSMSAnswerEdgeCases(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		status int
		body   string
		want   notify.FailureCode
	}{
		{"every recipient rejected", 200, `{"result_code":1,"message":"success","msg_id":"1","success_cnt":0,"error_cnt":1}`, notify.FailureUnknown},
		{"not json", 200, `<html>oops</html>`, notify.FailureUnknown},
		{"no result_code", 200, `{}`, notify.FailureUnknown},
		{"404", 404, `not found`, notify.FailureUnknown},
		{"429", 429, `slow down`, notify.FailureRateLimited},
		{"500", 500, `boom`, notify.FailureTemporaryUnavailable},
		{"401", 401, `no`, notify.FailureUnauthorized},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, func(captured) (int, string) { return tc.status, tc.body })
			res := newSMSProvider(t, f).Send(context.Background(), []provider.Message{{To: "01011112222", Text: "a"}})
			require.NotNil(t, res[0].Err)
			require.Equal(t, tc.want, res[0].Err.Code)
			require.NotNil(t, res[0].Exchange.Response)
		})
	}
}

func TestTimeout(t *testing.T) {
	t.Parallel()
	f := newFake(t, func(r captured) (int, string) {
		time.Sleep(500 * time.Millisecond)
		return http.StatusOK, okSend
	})
	p, err := SMSKind().New(smsConfig(f.URL), provider.Deps{HTTP: providertest.Client(100 * time.Millisecond)})
	require.NoError(t, err)
	providertest.RequireTimeouts(t, p, provider.Message{To: "01011112222", Text: "a"})
}

func TestSMSQuota(t *testing.T) {
	t.Parallel()
	f := newFake(t, func(captured) (int, string) {
		return http.StatusOK, `{"result_code":1,"message":"","SMS_CNT":1234,"LMS_CNT":"456","MMS_CNT":200}`
	})
	q, err := newSMSProvider(t, f).Quota(context.Background())
	require.NoError(t, err)
	require.Equal(t, provider.Quota{Period: "current", RemainingCredit: 1890, Currency: "count"}, q)
	reqs := f.requests("/remain/")
	require.Len(t, reqs, 1)
	require.Equal(t, testAPIKey, reqs[0].Form.Get("key"))
	require.Equal(t, testUserID, reqs[0].Form.Get("user_id"))
	golden(t, "remain", reqs[0])
}

func TestQuotaFailure(t *testing.T) {
	t.Parallel()
	f := newFake(t, func(captured) (int, string) { return http.StatusOK, `{"result_code":"-101","message":"인증오류"}` })
	_, err := newSMSProvider(t, f).Quota(context.Background())
	var perr *provider.Error
	require.True(t, errors.As(err, &perr))
	require.Equal(t, notify.FailureUnauthorized, perr.Code)
}

// Aligo takes an LMS title of at most 44 bytes and a text of at most
// 2,000 (EUC-KR): the title is cut on a character boundary, an over-long
// text fails before any call.
func TestSMSLimits(t *testing.T) {
	t.Parallel()
	f := newFake(t, func(captured) (int, string) { return http.StatusOK, okSend })
	p := newSMSProvider(t, f)
	long := strings.Repeat("가", 46)

	res := p.Send(context.Background(), []provider.Message{{To: "01011112222", Title: strings.Repeat("제목", 12) + "x", Text: long}})
	require.Nil(t, res[0].Err)
	require.Equal(t, strings.Repeat("제목", 11), f.requests("/send/")[0].Form.Get("title"), "44 bytes, no half character")

	res = p.Send(context.Background(), []provider.Message{{To: "01011112222", Title: "a" + strings.Repeat("가", 30), Text: long}})
	require.Nil(t, res[0].Err)
	require.Equal(t, "a"+strings.Repeat("가", 21), f.requests("/send/")[1].Form.Get("title"))

	res = p.Send(context.Background(), []provider.Message{
		{To: "01011112222", Text: strings.Repeat("가", 1001)},
		{To: "01011113333", Text: strings.Repeat("가", 1000)},
	})
	providertest.RequireRefused(t, res[0])
	require.Nil(t, res[1].Err)
	require.Len(t, f.requests("/send/"), 3, "the valid message went alone")
}
