package limits_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/notifytest"
)

var ctx = context.Background()

type bundle struct {
	env   *notifytest.Env
	key   *client.Client
	keyID string
}

func setup(t *testing.T) *bundle {
	t.Helper()
	env := notifytest.StartDaemon(t)
	b := &bundle{env: env}
	b.key, b.keyID = b.newKey(t, "test")
	return b
}

func (b *bundle) newKey(t *testing.T, name string) (*client.Client, string) {
	t.Helper()
	k, id, err := b.env.Owner.CreateAPIKey(ctx, name, "notifications:send", "notifications:read")
	require.NoError(t, err)
	return k, id
}

func (b *bundle) dash(t *testing.T, method, path string, body any) *client.Response {
	t.Helper()
	r, err := b.env.Owner.Dashboard(ctx, method, path, body)
	require.NoError(t, err)
	return r
}

func signed(t *testing.T, k *client.Client, method, path string, body any) *client.Response {
	t.Helper()
	r, err := k.Signed(ctx, method, path, body)
	require.NoError(t, err)
	return r
}

// lookup is a status lookup of an unknown request: it passes
// authentication, counts, and answers 404 when under the limits.
func lookup(t *testing.T, k *client.Client) *client.Response {
	t.Helper()
	return signed(t, k, "GET", "/v1/notifications/"+uuid.NewString(), nil)
}

func requireNotLimited(t *testing.T, r *client.Response) {
	t.Helper()
	require.NotEqual(t, http.StatusTooManyRequests, r.Status, string(r.Body))
}

// limited asserts a 429 problem with code and no rate headers.
func limited(t *testing.T, r *client.Response, code string) {
	t.Helper()
	require.Equal(t, http.StatusTooManyRequests, r.Status, string(r.Body))
	require.Contains(t, r.Header.Get("Content-Type"), "application/problem+json")
	require.Equal(t, code, r.Problem().Code, string(r.Body))
	require.Empty(t, r.Header.Get("Retry-After"))
	for name := range r.Header {
		require.NotContains(t, http.CanonicalHeaderKey(name), "X-Ratelimit", name)
	}
}

func problem(t *testing.T, r *client.Response, status int, code string) {
	t.Helper()
	require.Equal(t, status, r.Status, string(r.Body))
	require.Equal(t, code, r.Problem().Code, string(r.Body))
}

func (b *bundle) putWorkspacePolicy(t *testing.T, body map[string]any) map[string]any {
	t.Helper()
	r := b.dash(t, "PUT", "/v1/limits/rate/workspace", body)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	var out map[string]any
	require.NoError(t, r.Decode(&out))
	return out
}

func (b *bundle) putKeyPolicy(t *testing.T, keyID string, body map[string]any) map[string]any {
	t.Helper()
	r := b.dash(t, "PUT", "/v1/limits/rate/api-keys/"+keyID, body)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	var out map[string]any
	require.NoError(t, r.Decode(&out))
	return out
}

// rawSigned sends a signed request with a chosen nonce, for replay checks.
func rawSigned(t *testing.T, k *client.Client, method, path string, body []byte, nonce string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, k.BaseURL+path, bytes.NewReader(body))
	require.NoError(t, err)
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-API-Key", k.APIKey)
	req.Header.Set("X-Timestamp", ts)
	req.Header.Set("X-Nonce", nonce)
	req.Header.Set("X-Signature", client.Sign(k.HMACSecret, method, path, ts, nonce, body))
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, res.Body)
	return res.StatusCode
}

func sms(to, text string) map[string]any {
	return map[string]any{"channel": "sms", "recipient": map[string]any{"address": to}, "content": map[string]any{"text": text}}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// smsRoute registers a simulator sms provider and routes sms to it.
func (b *bundle) smsRoute(t *testing.T) {
	t.Helper()
	r := b.dash(t, "POST", "/v1/providers", map[string]any{"providerKind": "vendora_sms", "displayName": "a",
		"configJson": map[string]string{"base_url": b.env.SimURL, "vendora_user_id": "u", "vendora_api_key": "k", "vendora_sender": "0212345678"}})
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	var out struct {
		Provider struct {
			ID string `json:"id"`
		} `json:"provider"`
	}
	require.NoError(t, r.Decode(&out))
	r = b.dash(t, "PUT", "/v1/routes", map[string]any{"routes": []any{map[string]any{"channel": "sms", "providerAccountId": out.Provider.ID, "priority": 1}}})
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
}
