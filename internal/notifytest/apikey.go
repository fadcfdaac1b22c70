package notifytest

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
)

// APIKey creates an API key of the owner named name with scopes and
// answers its client, signing with the daemon's clock, and its id.
func (e *Env) APIKey(t testing.TB, name string, scopes ...string) (*client.Client, string) {
	t.Helper()
	k, id, err := e.Owner.CreateAPIKey(context.Background(), name, scopes...)
	require.NoError(t, err)
	k.Now = e.now
	return k, id
}

// SendKey is an API key that may send and read notifications, the key
// most e2e tests drive the Notification API with.
func (e *Env) SendKey(t testing.TB) *client.Client {
	t.Helper()
	k, _ := e.APIKey(t, "test", "notifications:send", "notifications:read")
	return k
}

// TestKey creates a test-mode API key (issue 36) of the owner named name
// with scopes and answers its client, signing with the daemon's clock,
// and its key id (nk_test_…).
func (e *Env) TestKey(t testing.TB, name string, scopes ...string) (*client.Client, string) {
	t.Helper()
	r := DashboardCall(t, e.Owner, "POST", "/v1/api-keys", map[string]any{"name": name, "scopes": scopes, "test": true}, http.StatusCreated)
	out := Decode[struct {
		APIKey struct {
			KeyID string `json:"keyId"`
			Test  bool   `json:"test"`
		} `json:"apiKey"`
		Key        string `json:"key"`
		HMACSecret string `json:"hmacSecret"`
	}](t, r, http.StatusCreated)
	require.True(t, out.APIKey.Test)
	k := client.New(e.Daemon.URL())
	k.APIKey, k.HMACSecret, k.Now = out.Key, out.HMACSecret, e.now
	return k, out.APIKey.KeyID
}
