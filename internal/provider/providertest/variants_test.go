package providertest

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/provider"
	"github.com/notifyd/notifyd/internal/simulator"
)

// TestContentVariants sends messages of other shapes than the success
// test's (long texts, no title, no HTML, emoji) and checks what arrives.
func TestContentVariants(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("가나다라마바사아자차 ", 10) // 210 EUC-KR bytes: LMS
	type variant struct {
		name string
		kind string
		msgs []provider.Message
		want []simulator.Message
	}
	sms := func(n int, title, text string) provider.Message {
		m := smsMsg(n)
		m.Title, m.Text = title, text
		return m
	}
	vs := []variant{
		{name: "aligo LMS with title", kind: "vendora_sms",
			msgs: []provider.Message{sms(1, "공지사항", long)},
			want: []simulator.Message{{To: phone(1), Subject: "공지사항", Text: long, Headers: map[string]string{"msg_type": "LMS"}}}},
		{name: "aligo SMS emoji", kind: "vendora_sms",
			msgs: []provider.Message{sms(1, "", "Hi 👋 there")},
			want: []simulator.Message{{To: phone(1), Text: "Hi 👋 there", Headers: map[string]string{"msg_type": "SMS"}}}},
		{name: "aligo mass mixed SMS and LMS", kind: "vendora_sms",
			msgs: []provider.Message{sms(1, "", "short"), sms(2, "공지", long)},
			want: []simulator.Message{
				{To: phone(1), Subject: "공지", Text: "short", Headers: map[string]string{"msg_type": "LMS"}},
				{To: phone(2), Subject: "공지", Text: long, Headers: map[string]string{"msg_type": "LMS"}}}},
		{name: "solapi LMS", kind: "vendorb_sms",
			msgs: []provider.Message{sms(1, "공지사항", long)},
			want: []simulator.Message{{To: phone(1), Subject: "공지사항", Text: long, Headers: map[string]string{"type": "LMS"}}}},
		{name: "solapi SMS no title", kind: "vendorb_sms",
			msgs: []provider.Message{sms(1, "", "short")},
			want: []simulator.Message{{To: phone(1), Text: "short", Headers: map[string]string{"type": "SMS"}}}},
		{name: "alimtalk no name no title no variables", kind: "vendora_msgr",
			msgs: []provider.Message{func() provider.Message {
				m := alimMsg(1)
				m.ToName, m.Title, m.Variables = "", "", nil
				return m
			}()},
			want: []simulator.Message{{To: phone(1), Text: alimMsg(1).Text, Headers: map[string]string{"recvname": ""}}}},
		{name: "solapi ATA without vendor template id", kind: "vendorb_msgr",
			msgs: []provider.Message{func() provider.Message {
				m := alimMsg(1)
				m.VendorTemplateID, m.Variables = "", nil
				return m
			}()},
			want: []simulator.Message{{To: phone(1), Text: alimMsg(1).Text, Headers: map[string]string{"templateId": "ORDER_OK", "type": "ATA"}}}},
		{name: "push data only", kind: "push_gateway",
			msgs: []provider.Message{{To: "tok-1", Data: map[string]string{"a": "1"}}},
			want: []simulator.Message{{To: "tok-1", Headers: map[string]string{"a": "1"}}}},
		{name: "push notification only", kind: "push_gateway",
			msgs: []provider.Message{{To: "tok-2", Text: "body only"}},
			want: []simulator.Message{{To: "tok-2", Text: "body only"}}},
	}
	for _, kind := range []string{"mailx_email", "maily_email", "mailz_email"} {
		textOnly := emailMsg(1)
		textOnly.HTML, textOnly.Headers, textOnly.Title = "", nil, "안녕하세요 — 한글 제목"
		htmlOnly := emailMsg(2)
		htmlOnly.Text, htmlOnly.Headers = "", nil
		vs = append(vs, variant{name: kind + " text only, html only", kind: kind,
			msgs: []provider.Message{textOnly, htmlOnly},
			want: []simulator.Message{
				{To: textOnly.To, Subject: textOnly.Title, Text: textOnly.Text, Headers: map[string]string{"List-Unsubscribe": ""}},
				{To: htmlOnly.To, Subject: htmlOnly.Title, HTML: htmlOnly.HTML}}})
	}
	for _, kind := range []string{"chata_webhook", "chata_bot", "chatb_webhook", "chatb_bot"} {
		m := cases[kind].msg(1)
		m.Title, m.Text = "", "배포 완료 🚀 <b>&amp;</b>"
		to := cases[kind].want(m).To
		vs = append(vs, variant{name: kind + " no title", kind: kind,
			msgs: []provider.Message{m}, want: []simulator.Message{{To: to, Text: m.Text}}})
	}
	for _, v := range vs {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			res := send(t, e.provider(v.kind, 0), v.msgs...)
			for i, w := range v.want {
				require.Nil(t, res[i].Err, "message %d: %v", i, res[i].Err)
				got := e.sim.Messages(v.kind, w.To, 0)
				require.Len(t, got, 1, "recorded for %s", w.To)
				require.Equal(t, w.Subject, got[0].Subject)
				require.Equal(t, w.Text, got[0].Text)
				require.Equal(t, w.HTML, got[0].HTML)
				for k, hv := range w.Headers {
					if hv == "" {
						require.NotContains(t, got[0].Headers, k)
						continue
					}
					require.Equal(t, hv, got[0].Headers[k], "header %s", k)
				}
				require.True(t, cases[v.kind].idOK(res[i].MessageID, got[0].ID))
			}
		})
	}
}
