package solapi

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider"
)

func ataMsg(id, to string) provider.Message {
	return provider.Message{
		ID: id, Channel: notify.ChannelAlimTalk, To: to, ToName: "홍길동", Title: "주문 안내",
		Text: "홍길동님, 주문이 접수되었습니다.", TemplateCode: "order_received",
		VendorTemplateID: "KA01TP230101000000000000000001", SenderProfileKey: "KA01PF230101000000000000000001",
		Variables: map[string]string{"name": "홍길동", "#{order}": "A-1"},
	}
}

func TestATASend(t *testing.T) {
	t.Parallel()
	f := newFake(t, acceptAll)
	s := newTestSender(t, MsgrKind(), f)

	res := s.Send(context.Background(), []provider.Message{ataMsg("req-1", "01011112222")})
	require.Nil(t, res[0].Err)
	require.Equal(t, "M4Vreq-1", res[0].MessageID)
	requireNoSecrets(t, res[0].Exchange)

	reqs := f.requests()
	require.Len(t, reqs, 1)
	require.Equal(t, []wireMessage{{
		To: "01011112222", From: testSender, Type: "ATA", Text: "홍길동님, 주문이 접수되었습니다.",
		KakaoOptions: &kakaoOptions{
			PfID:       "KA01PF230101000000000000000001",
			TemplateID: "KA01TP230101000000000000000001",
			Variables:  map[string]string{"#{name}": "홍길동", "#{order}": "A-1"},
			DisableSms: true,
		},
		CustomFields: map[string]string{"nid": "req-1"},
	}}, reqs[0].messages(t))
	require.Contains(t, reqs[0].Body, `"disableSms":true`)
	require.NotContains(t, reqs[0].Body, `"subject"`, "AlimTalk has no subject")
	golden(t, "send_ata", reqs[0])
}

func TestATATemplateFallbackAndMissing(t *testing.T) {
	t.Parallel()
	f := newFake(t, acceptAll)
	s := newTestSender(t, MsgrKind(), f)

	fallback := ataMsg("a", "01000000001")
	fallback.VendorTemplateID = ""
	fallback.Variables = nil
	noProfile := ataMsg("b", "01000000002")
	noProfile.SenderProfileKey = ""
	noTemplate := ataMsg("c", "01000000003")
	noTemplate.VendorTemplateID, noTemplate.TemplateCode = "", ""

	res := s.Send(context.Background(), []provider.Message{fallback, noProfile, noTemplate})
	require.Nil(t, res[0].Err)
	require.Equal(t, notify.FailureInvalidRequest, res[1].Err.Code)
	require.Equal(t, notify.FailureInvalidRequest, res[2].Err.Code)

	msgs := f.requests()[0].messages(t)
	require.Len(t, msgs, 1, "invalid messages are not sent")
	require.Equal(t, "order_received", msgs[0].KakaoOptions.TemplateID)
	require.Nil(t, msgs[0].KakaoOptions.Variables)
}

func TestATAPartialFailure(t *testing.T) {
	t.Parallel()
	f := newFake(t, func(t *testing.T, r captured) (int, string) {
		return http.StatusOK, answer(t, r, func(m wireMessage) string {
			if m.To == "01000000002" {
				return "1042" // bad templateId
			}
			return "2000"
		})
	})
	s := newTestSender(t, MsgrKind(), f)
	res := s.Send(context.Background(), []provider.Message{ataMsg("a", "01000000001"), ataMsg("b", "01000000002")})
	require.Nil(t, res[0].Err)
	require.Equal(t, notify.FailureInvalidRequest, res[1].Err.Code)
	require.False(t, res[1].Err.FallsBack())
}
