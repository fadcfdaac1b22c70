// Package fallback_test drives cross-channel fallback (issue 21, item 4)
// end to end against the provider simulator: a send carrying
// channelFallback, the engine moving to the next channel, and what the
// status lookup, the attempt history and the webhook events show.
package fallback_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/notifytest"
)

var ctx = context.Background()

type bundle struct {
	env *notifytest.Env
	key *client.Client
	// accounts by name: msgrB (vendorb_msgr), msgrA (vendora_msgr), sms
	// (vendora_sms).
	accounts map[string]string
}

// setup starts a daemon with two AlimTalk routes (vendorb_msgr first,
// then vendora_msgr), one SMS route (vendora_sms), and an approved
// AlimTalk template "order" with the text "#{name}님 주문 {{order}} 접수".
func setup(t *testing.T, opts ...notifytest.Option) *bundle {
	t.Helper()
	env := notifytest.StartDaemon(t, opts...)
	b := &bundle{env: env, key: env.SendKey(t), accounts: map[string]string{}}
	for name, kind := range map[string]string{"msgrB": "vendorb_msgr", "msgrA": "vendora_msgr", "sms": "vendora_sms"} {
		b.accounts[name] = env.SimProvider(t, kind, name, nil)
	}
	b.dashOK(t, "PUT", "/v1/routes", map[string]any{"routes": []map[string]any{
		{"channel": "msgr_alimtalk", "providerAccountId": b.accounts["msgrB"], "priority": 1},
		{"channel": "msgr_alimtalk", "providerAccountId": b.accounts["msgrA"], "priority": 2},
		{"channel": "sms", "providerAccountId": b.accounts["sms"], "priority": 1},
	}}, nil)
	b.template(t, "order", "msgr_alimtalk", "#{name}님 주문 {{order}} 접수", true)
	return b
}

// template creates a template of channel with one published version of
// text, approved when approve is set (AlimTalk).
func (b *bundle) template(t *testing.T, code, channel, text string, approve bool) {
	t.Helper()
	var tp struct {
		Template struct {
			ID string `json:"id"`
		} `json:"template"`
	}
	b.dashOK(t, "POST", "/v1/templates", map[string]any{"code": code, "channel": channel, "name": code,
		"vendorTemplateId": "TP-" + code, "senderProfileKey": "PF-1"}, &tp)
	id := tp.Template.ID
	b.dashOK(t, "POST", "/v1/templates/"+id+"/versions", map[string]any{"text": text}, nil)
	b.dashOK(t, "POST", "/v1/templates/"+id+"/versions/1/publish", nil, nil)
	if approve {
		b.dashOK(t, "PUT", "/v1/templates/"+id+"/review-status", map[string]any{"reviewStatus": "APPROVED"}, nil)
	}
}

// dashOK makes a dashboard call as the owner, requires a 2xx answer and
// decodes it into out (when not nil).
func (b *bundle) dashOK(t *testing.T, method, path string, body, out any) {
	t.Helper()
	r := notifytest.Dash(t, b.env.Owner, method, path, body)
	require.Less(t, r.Status, 300, "%s %s: %s", method, path, r.Body)
	if out != nil {
		require.NoError(t, r.Decode(out))
	}
}

// alimtalk is an AlimTalk send of template "order" to 01012345678 with
// the chain steps.
func alimtalk(steps ...map[string]any) map[string]any {
	body := map[string]any{"channel": "msgr_alimtalk", "recipient": map[string]any{"address": "01012345678"},
		"content": map[string]any{"templateCode": "order", "templateVariables": map[string]string{"name": "Kim", "order": "A-1"}}}
	if steps != nil {
		body["channelFallback"] = steps
	}
	return body
}

// smsStep is a chain step to sms with its own text.
func smsStep(text string) map[string]any {
	return map[string]any{"channel": "sms", "content": map[string]any{"text": text}}
}

func (b *bundle) send(t *testing.T, body map[string]any) string {
	t.Helper()
	out := notifytest.Send(t, b.key, body)
	require.Equal(t, "queued", out.Status)
	return out.RequestID
}

// channels lists the channel of each attempt, in order.
func channels(as []notifytest.Attempt) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.Channel
	}
	return out
}

// webhook registers an endpoint for every notification event and returns
// what it receives.
func (b *bundle) webhook(t *testing.T) *notifytest.Receiver {
	t.Helper()
	rc := notifytest.NewReceiver(t, nil)
	b.dashOK(t, "POST", "/v1/webhooks", map[string]any{"url": rc.URL,
		"events": []string{"notification.delivered", "notification.failed", "notification.canceled"}}, nil)
	return rc
}
