package webhooks_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/config"
	"github.com/notifyd/notifyd/internal/notifytest"
)

var ctx = context.Background()

type bundle struct {
	env *notifytest.Env
	key *client.Client
}

// fast shortens the webhook timeout and retry schedule to milliseconds.
func fast(timeout time.Duration, schedule ...time.Duration) notifytest.Option {
	return func(c *config.Config) {
		c.WebhookTimeout = timeout
		c.WebhookRetrySchedule = append([]time.Duration{}, schedule...)
	}
}

func setup(t *testing.T, opts ...notifytest.Option) *bundle {
	t.Helper()
	env := notifytest.StartDaemon(t, opts...)
	return &bundle{env: env, key: env.SendKey(t)}
}

// send accepts an sms; extra fields are merged into the body.
func (b *bundle) send(t *testing.T, text string, extra map[string]any) string {
	t.Helper()
	body := map[string]any{"channel": "sms", "recipient": map[string]any{"address": "01012345678"},
		"content": map[string]any{"text": text}, "metadata": map[string]string{"order": text}}
	for k, v := range extra {
		body[k] = v
	}
	return notifytest.Send(t, b.key, body).RequestID
}

func (b *bundle) status(t *testing.T, id string) string {
	t.Helper()
	return notifytest.Lookup(t, b.key, id).Status
}

type webhookOut struct {
	ID        string   `json:"id"`
	URL       string   `json:"url"`
	Events    []string `json:"events"`
	Enabled   bool     `json:"enabled"`
	CreatedAt string   `json:"createdAt"`
	UpdatedAt string   `json:"updatedAt"`
}

// createWebhook registers url for events and returns it with its secret.
func (b *bundle) createWebhook(t *testing.T, url string, events ...string) (webhookOut, string) {
	t.Helper()
	r := notifytest.Dash(t, b.env.Owner, "POST", "/v1/webhooks", map[string]any{"url": url, "events": events})
	out := notifytest.Decode[struct {
		Webhook webhookOut `json:"webhook"`
		Secret  string     `json:"secret"`
	}](t, r, http.StatusCreated)
	require.True(t, strings.HasPrefix(out.Secret, "whsec_"), out.Secret)
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(out.Secret, "whsec_"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(raw), 24)
	return out.Webhook, out.Secret
}

type tryOut struct {
	Attempt    int     `json:"attempt"`
	HTTPStatus *int    `json:"httpStatus"`
	Error      *string `json:"error"`
	DurationMs int64   `json:"durationMs"`
	Response   *string `json:"response"`
	CreatedAt  string  `json:"createdAt"`
}

type deliveryOut struct {
	ID          string   `json:"id"`
	WebhookID   string   `json:"webhookId"`
	EventID     string   `json:"eventId"`
	EventType   string   `json:"eventType"`
	RequestID   string   `json:"requestId"`
	Status      string   `json:"status"`
	Attempt     int      `json:"attempt"`
	HTTPStatus  *int     `json:"httpStatus"`
	Error       *string  `json:"error"`
	DurationMs  *int64   `json:"durationMs"`
	NextRetryAt *string  `json:"nextRetryAt"`
	FinishedAt  *string  `json:"finishedAt"`
	Tries       []tryOut `json:"tries"`
}

type deliveryPage struct {
	Deliveries []deliveryOut `json:"deliveries"`
	Cursor     *string       `json:"cursor"`
	HasNext    bool          `json:"hasNext"`
}

func (b *bundle) deliveries(t *testing.T, webhookID, query string) deliveryPage {
	t.Helper()
	r := notifytest.Dash(t, b.env.Owner, "GET", "/v1/webhooks/"+webhookID+"/deliveries"+query, nil)
	return notifytest.Decode[deliveryPage](t, r, http.StatusOK)
}

// waitDeliveries polls the delivery log until cond holds.
func (b *bundle) waitDeliveries(t *testing.T, webhookID, what string, cond func([]deliveryOut) bool) []deliveryOut {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		p := b.deliveries(t, webhookID, "?limit=200")
		if cond(p.Deliveries) {
			return p.Deliveries
		}
		require.True(t, time.Now().Before(deadline), "%s not reached: %+v", what, p.Deliveries)
		time.Sleep(25 * time.Millisecond)
	}
}

func finished(n int) func([]deliveryOut) bool {
	return func(ds []deliveryOut) bool {
		if len(ds) != n {
			return false
		}
		for _, d := range ds {
			if d.Status == "pending" {
				return false
			}
		}
		return true
	}
}
