// Package receipts_test drives delivery receipts (issue 35) end to end
// against the provider simulator: the SMS and AlimTalk vendors' result
// APIs polled after the send, the receipt beside SPEC's status in the
// lookup, the receipt events (once), and the channel fallback of an
// undelivered AlimTalk.
package receipts_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/config"
	"github.com/notifyd/notifyd/internal/notifytest"
)

var ctx = context.Background()

// fastPolls looks reports up every 300 ms and gives up after deadline.
func fastPolls(deadline time.Duration) notifytest.Option {
	return func(c *config.Config) {
		c.ReceiptPollSchedule = []time.Duration{300 * time.Millisecond, 300 * time.Millisecond}
		c.ReceiptDeadline = deadline
	}
}

type bundle struct {
	env *notifytest.Env
	key *client.Client
	// accounts by kind.
	accounts map[string]string
}

// setup starts a daemon whose sms route is smsKind and whose AlimTalk
// route is vendorb_msgr, with an approved AlimTalk template "order".
func setup(t *testing.T, smsKind string, opts ...notifytest.Option) *bundle {
	t.Helper()
	env := notifytest.StartDaemon(t, append([]notifytest.Option{fastPolls(30 * time.Second)}, opts...)...)
	b := &bundle{env: env, key: env.SendKey(t), accounts: map[string]string{}}
	for _, kind := range []string{smsKind, "vendorb_msgr"} {
		b.accounts[kind] = env.SimProvider(t, kind, kind, nil)
	}
	b.accounts["chata_webhook"] = env.SimProvider(t, "chata_webhook", "chat", map[string]string{
		"chata_webhook_url": env.SimURL + "/services/T0/B0/XXXX"})
	b.dashOK(t, "PUT", "/v1/routes", map[string]any{"routes": []map[string]any{
		{"channel": "msgr_alimtalk", "providerAccountId": b.accounts["vendorb_msgr"], "priority": 1},
		{"channel": "sms", "providerAccountId": b.accounts[smsKind], "priority": 1},
		{"channel": "chata_webhook", "providerAccountId": b.accounts["chata_webhook"], "priority": 1},
	}}, nil)
	var tp struct {
		Template struct {
			ID string `json:"id"`
		} `json:"template"`
	}
	b.dashOK(t, "POST", "/v1/templates", map[string]any{"code": "order", "channel": "msgr_alimtalk", "name": "order",
		"vendorTemplateId": "TP-order", "senderProfileKey": "PF-1"}, &tp)
	b.dashOK(t, "POST", "/v1/templates/"+tp.Template.ID+"/versions", map[string]any{"text": "#{name}님 주문 {{order}} 접수"}, nil)
	b.dashOK(t, "POST", "/v1/templates/"+tp.Template.ID+"/versions/1/publish", nil, nil)
	b.dashOK(t, "PUT", "/v1/templates/"+tp.Template.ID+"/review-status", map[string]any{"reviewStatus": "APPROVED"}, nil)
	return b
}

func (b *bundle) dashOK(t *testing.T, method, path string, body, out any) {
	t.Helper()
	r := notifytest.Dash(t, b.env.Owner, method, path, body)
	require.Less(t, r.Status, 300, "%s %s: %s", method, path, r.Body)
	if out != nil {
		require.NoError(t, r.Decode(out))
	}
}

// webhook registers an endpoint for SPEC's delivered event and the
// receipt events.
func (b *bundle) webhook(t *testing.T) *notifytest.Receiver {
	t.Helper()
	rc := notifytest.NewReceiver(t, nil)
	b.dashOK(t, "POST", "/v1/webhooks", map[string]any{"url": rc.URL,
		"events": []string{"notification.delivered", "notification.arrived", "notification.undelivered"}}, nil)
	return rc
}

func (b *bundle) send(t *testing.T, body map[string]any) string {
	t.Helper()
	out := notifytest.Send(t, b.key, body)
	require.Equal(t, "queued", out.Status)
	return out.RequestID
}

// waitReceipt waits until the request's deliveryStatus is status.
func (b *bundle) waitReceipt(t *testing.T, id, status string) notifytest.Request {
	t.Helper()
	return notifytest.WaitFor(t, b.key, id, "deliveryStatus "+status, func(r notifytest.Request) bool {
		return r.DeliveryStatus != nil && r.DeliveryStatus.Status == status
	})
}

// count is how many events of typ for request id rc received.
func count(rc *notifytest.Receiver, id, typ string) int {
	n := 0
	for _, ev := range rc.Events() {
		if ev.Data.RequestID == id && ev.Type == typ {
			n++
		}
	}
	return n
}

// alimtalk is an AlimTalk send of template "order" to 01012345678 with an
// SMS step.
func alimtalk(smsText string) map[string]any {
	return map[string]any{"channel": "msgr_alimtalk", "recipient": map[string]any{"address": "01012345678"},
		"content":         map[string]any{"templateCode": "order", "templateVariables": map[string]string{"name": "Kim", "order": "A-1"}},
		"channelFallback": []map[string]any{{"channel": "sms", "content": map[string]any{"text": smsText}}}}
}
