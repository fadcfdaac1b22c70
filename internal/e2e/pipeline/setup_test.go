package pipeline_test

import (
	"context"
	"net/http"
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
}

func setup(t *testing.T, opts ...notifytest.Option) *bundle {
	t.Helper()
	env := notifytest.StartDaemon(t, opts...)
	key, _, err := env.Owner.CreateAPIKey(ctx, "test", "notifications:send", "notifications:read")
	require.NoError(t, err)
	return &bundle{env: env, key: key}
}

// provider registers a provider of kind against the simulator.
func (b *bundle) provider(t *testing.T, kind, name string, cfg map[string]string) string {
	t.Helper()
	if cfg == nil {
		cfg = map[string]string{}
	}
	if _, ok := cfg["base_url"]; !ok {
		cfg["base_url"] = b.env.SimURL
	}
	r, err := b.env.Owner.Dashboard(ctx, "POST", "/v1/providers", map[string]any{"providerKind": kind, "displayName": name, "configJson": cfg})
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	var out struct {
		Provider struct {
			ID string `json:"id"`
		} `json:"provider"`
	}
	require.NoError(t, r.Decode(&out))
	return out.Provider.ID
}

func smsConfig() map[string]string {
	return map[string]string{"vendora_user_id": "u", "vendora_api_key": "k", "vendora_sender": "0212345678"}
}

func solapiConfig() map[string]string {
	return map[string]string{"vendorb_api_key": "k", "vendorb_api_secret": "s", "vendorb_sender": "0212345678"}
}

type route struct {
	Channel           string `json:"channel"`
	ProviderAccountID string `json:"providerAccountId"`
	Priority          int    `json:"priority"`
}

func (b *bundle) routes(t *testing.T, rs ...route) {
	t.Helper()
	r, err := b.env.Owner.Dashboard(ctx, "PUT", "/v1/routes", map[string]any{"routes": rs})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
}

type sendOut struct {
	Status       string  `json:"status"`
	RequestID    string  `json:"requestId"`
	QueueJobID   *string `json:"queueJobId"`
	Deduplicated bool    `json:"deduplicated"`
	ScheduledAt  *string `json:"scheduledAt"`
}

func (b *bundle) send(t *testing.T, body map[string]any) sendOut {
	t.Helper()
	r, err := b.key.Signed(ctx, "POST", "/v1/notifications", body)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	var out sendOut
	require.NoError(t, r.Data(&out))
	return out
}

type attemptOut struct {
	ProviderAccountID string  `json:"providerAccountId"`
	Status            string  `json:"status"`
	FailureCode       *string `json:"failureCode"`
	ProviderMessageID *string `json:"providerMessageId"`
}

type requestOut struct {
	RequestID                 string       `json:"requestId"`
	Status                    string       `json:"status"`
	SelectedProviderAccountID *string      `json:"selectedProviderAccountId"`
	SelectedProviderMessageID *string      `json:"selectedProviderMessageId"`
	FinalErrorCode            *string      `json:"finalErrorCode"`
	Attempts                  []attemptOut `json:"attempts"`
	Job                       *struct {
		Status       string `json:"status"`
		AttemptsMade int    `json:"attemptsMade"`
		MaxAttempts  int    `json:"maxAttempts"`
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

// wait polls the status lookup until the request is terminal.
func (b *bundle) wait(t *testing.T, id string) requestOut {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		out := b.get(t, id)
		if out.Status == "sent" || out.Status == "failed" || out.Status == "canceled" {
			return out
		}
		require.True(t, time.Now().Before(deadline), "request %s still %s", id, out.Status)
		time.Sleep(20 * time.Millisecond)
	}
}

func sms(to, text string) map[string]any {
	return map[string]any{"channel": "sms", "recipient": map[string]any{"address": to}, "content": map[string]any{"text": text}}
}
