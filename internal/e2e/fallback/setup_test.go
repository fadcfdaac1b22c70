// Package fallback_test drives cross-channel fallback (issue 21, item 4)
// end to end against the provider simulator: a send carrying
// channelFallback, the engine moving to the next channel, and what the
// status lookup, the attempt history and the webhook events show.
package fallback_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

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
	key, _, err := env.Owner.CreateAPIKey(ctx, "test", "notifications:send", "notifications:read")
	require.NoError(t, err)
	b := &bundle{env: env, key: key, accounts: map[string]string{}}
	for name, p := range map[string]struct {
		kind string
		cfg  map[string]string
	}{
		"msgrB": {"vendorb_msgr", map[string]string{"vendorb_api_key": "k", "vendorb_api_secret": "s", "vendorb_sender": "0212345678"}},
		"msgrA": {"vendora_msgr", map[string]string{"vendora_user_id": "u", "vendora_msgr_api_key": "k", "vendora_sender": "0212345678"}},
		"sms":   {"vendora_sms", map[string]string{"vendora_user_id": "u", "vendora_api_key": "k", "vendora_sender": "0212345678"}},
	} {
		p.cfg["base_url"] = env.SimURL
		var out struct {
			Provider struct {
				ID string `json:"id"`
			} `json:"provider"`
		}
		b.dashOK(t, "POST", "/v1/providers", map[string]any{"providerKind": p.kind, "displayName": name, "configJson": p.cfg}, &out)
		b.accounts[name] = out.Provider.ID
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
	r, err := b.env.Owner.Dashboard(ctx, method, path, body)
	require.NoError(t, err)
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
	r, err := b.key.Signed(ctx, "POST", "/v1/notifications", body)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	var out struct {
		RequestID string `json:"requestId"`
		Status    string `json:"status"`
	}
	require.NoError(t, r.Data(&out))
	require.Equal(t, "queued", out.Status)
	return out.RequestID
}

// bulk sends items in one bulk call, requires every one accepted and
// returns their request ids in order.
func (b *bundle) bulk(t *testing.T, items []any) []string {
	t.Helper()
	r, err := b.key.Signed(ctx, "POST", "/v1/notifications/bulk", map[string]any{"items": items})
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	var res struct {
		Items []struct {
			RequestID string `json:"requestId"`
		} `json:"items"`
	}
	require.NoError(t, r.Data(&res))
	require.Len(t, res.Items, len(items))
	ids := make([]string, len(items))
	for i, it := range res.Items {
		ids[i] = it.RequestID
	}
	return ids
}

type attemptOut struct {
	ProviderAccountID string  `json:"providerAccountId"`
	ProviderKind      string  `json:"providerKind"`
	Channel           string  `json:"channel"`
	Status            string  `json:"status"`
	FailureCode       *string `json:"failureCode"`
	FinishedAt        string  `json:"finishedAt"`
}

type stepOut struct {
	Step             int     `json:"step"`
	Channel          string  `json:"channel"`
	RecipientAddress string  `json:"recipientAddress"`
	TemplateCode     *string `json:"templateCode"`
	Status           string  `json:"status"`
}

type requestOut struct {
	Channel                   string       `json:"channel"`
	Status                    string       `json:"status"`
	RecipientAddress          string       `json:"recipientAddress"`
	SelectedProviderAccountID *string      `json:"selectedProviderAccountId"`
	FinalErrorCode            *string      `json:"finalErrorCode"`
	DeliveredChannel          *string      `json:"deliveredChannel"`
	Attempts                  []attemptOut `json:"attempts"`
	ChannelFallback           *struct {
		CurrentStep    int       `json:"currentStep"`
		CurrentChannel string    `json:"currentChannel"`
		Steps          []stepOut `json:"steps"`
	} `json:"channelFallback"`
	Job struct {
		Status       string `json:"status"`
		AttemptsMade int    `json:"attemptsMade"`
		MaxAttempts  int    `json:"maxAttempts"`
		LastError    *struct {
			Code string `json:"code"`
		} `json:"lastError"`
	} `json:"job"`
}

func (b *bundle) get(t *testing.T, id string) requestOut {
	t.Helper()
	r, err := b.key.Signed(ctx, "GET", "/v1/notifications/"+id, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	var out requestOut
	require.NoError(t, r.Data(&out))
	return out
}

// waitFor polls the status lookup until cond holds (30 s at most).
func (b *bundle) waitFor(t *testing.T, id, what string, cond func(requestOut) bool) requestOut {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		out := b.get(t, id)
		if cond(out) {
			return out
		}
		require.True(t, time.Now().Before(deadline), "request %s: %s not reached: %+v", id, what, out)
		time.Sleep(20 * time.Millisecond)
	}
}

// wait polls until the request is terminal.
func (b *bundle) wait(t *testing.T, id string) requestOut {
	t.Helper()
	return b.waitFor(t, id, "a final state", func(o requestOut) bool {
		return o.Status == "sent" || o.Status == "failed" || o.Status == "canceled"
	})
}

// channels lists the channel of each attempt, in order.
func channels(as []attemptOut) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.Channel
	}
	return out
}

// receiver collects the webhook events of the workspace.
type receiver struct {
	mu     sync.Mutex
	events []client.WebhookEvent
}

// webhook registers an endpoint for every notification event and returns
// what it receives.
func (b *bundle) webhook(t *testing.T) *receiver {
	t.Helper()
	rc := &receiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var ev client.WebhookEvent
		if json.Unmarshal(body, &ev) == nil {
			rc.mu.Lock()
			rc.events = append(rc.events, ev)
			rc.mu.Unlock()
		}
	}))
	t.Cleanup(srv.Close)
	b.dashOK(t, "POST", "/v1/webhooks", map[string]any{"url": srv.URL,
		"events": []string{"notification.delivered", "notification.failed", "notification.canceled"}}, nil)
	return rc
}

// await waits for the events of request id until one of type typ came and
// returns them all.
func (rc *receiver) await(t *testing.T, id, typ string) []client.WebhookEvent {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		rc.mu.Lock()
		var mine []client.WebhookEvent
		found := false
		for _, ev := range rc.events {
			if ev.Data.RequestID == id {
				mine = append(mine, ev)
				found = found || ev.Type == typ
			}
		}
		rc.mu.Unlock()
		if found {
			return mine
		}
		require.True(t, time.Now().Before(deadline), "no %s event for %s", typ, id)
		time.Sleep(20 * time.Millisecond)
	}
}
