package providertest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider"
)

// TestBatchOverVendorLimit: SPEC lets an account raise
// dispatch_max_batch_size, so Send may get more messages than one vendor
// call takes (Aligo 500, Resend 100, Postmark 500); the adapter splits
// them into several calls instead of having the whole batch refused.
func TestBatchOverVendorLimit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		kind  string
		n     int
		calls int
	}{
		{"vendora_sms", 501, 2},
		{"vendora_msgr", 501, 2},
		{"mailx_email", 101, 2},
		{"mailz_email", 501, 2},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			c := cases[tc.kind]
			msgs := make([]provider.Message, tc.n)
			for i := range msgs {
				msgs[i] = c.msg(i + 1)
			}
			res := send(t, e.provider(tc.kind, 0), msgs...)
			urls := map[string]bool{}
			for i, r := range res {
				require.Nil(t, r.Err, "message %d: %v", i, r.Err)
				urls[fmt.Sprintf("%p", r.Exchange.Response)] = true
			}
			require.Len(t, urls, tc.calls, "vendor calls")
			require.Len(t, e.sim.Messages(tc.kind, "", 0), tc.n)
		})
	}
}

// TestOversizedContent: content over a vendor's documented limit is
// invalid_request (ends the run: no route can send it either), whether the
// adapter refuses it first or the vendor does.
func TestOversizedContent(t *testing.T) {
	t.Parallel()
	with := func(kind string, f func(m *provider.Message)) provider.Message {
		m := cases[kind].msg(1)
		f(&m)
		return m
	}
	for _, tc := range []struct {
		name string
		kind string
		m    provider.Message
	}{
		{"aligo msg over 2,000 bytes", "vendora_sms", with("vendora_sms", func(m *provider.Message) { m.Text = strings.Repeat("가", 1001) })},
		{"fcm payload over 4,096 bytes", "push_gateway", with("push_gateway", func(m *provider.Message) { m.Text = strings.Repeat("a", 5000) })},
		{"slack bot text over 40,000", "chata_bot", with("chata_bot", func(m *provider.Message) { m.Text = strings.Repeat("a", 40001) })},
		{"slack webhook text over 40,000", "chata_webhook", with("chata_webhook", func(m *provider.Message) { m.Text = strings.Repeat("a", 40001) })},
		{"discord webhook content over 2,000", "chatb_webhook", with("chatb_webhook", func(m *provider.Message) { m.Text = strings.Repeat("a", 2001) })},
		{"discord bot content over 2,000", "chatb_bot", with("chatb_bot", func(m *provider.Message) { m.Text = strings.Repeat("a", 2001) })},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			r := send(t, e.provider(tc.kind, 0), tc.m)[0]
			require.NotNil(t, r.Err)
			require.Equal(t, notify.FailureInvalidRequest, r.Err.Code, r.Err.Message)
			require.Empty(t, e.sim.Messages(tc.kind, "", 0))
		})
	}
}

// TestAligoLongTitle: an LMS title over Aligo's 44 bytes is cut, not a
// reason to refuse the message.
func TestAligoLongTitle(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.provider("vendora_sms", 0)
	long := strings.Repeat("가", 46) // 92 bytes: LMS
	title := strings.Repeat("긴제목", 10)
	for _, msgs := range [][]provider.Message{
		{{To: phone(1), Title: title, Text: long}},
		{{To: phone(2), Title: title, Text: long}, {To: phone(3), Text: "short"}},
	} {
		res := send(t, p, msgs...)
		for i, r := range res {
			require.Nil(t, r.Err, "message %d: %v", i, r.Err)
			got := e.sim.Messages("vendora_sms", msgs[i].To, 0)
			require.Len(t, got, 1)
			require.Equal(t, strings.Repeat("긴제목", 7)+"긴", got[0].Subject)
			require.Equal(t, "LMS", got[0].Headers["msg_type"])
		}
	}
}
