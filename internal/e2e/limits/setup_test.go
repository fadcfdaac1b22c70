package limits_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

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
	return b.env.APIKey(t, name, "notifications:send", "notifications:read")
}

// lookup is a status lookup of an unknown request: it passes
// authentication, counts, and answers 404 when under the limits.
func lookup(t *testing.T, k *client.Client) *client.Response {
	t.Helper()
	return notifytest.Signed(t, k, "GET", "/v1/notifications/"+uuid.NewString(), nil)
}

func requireNotLimited(t *testing.T, r *client.Response) {
	t.Helper()
	require.NotEqual(t, http.StatusTooManyRequests, r.Status, string(r.Body))
}

// limited asserts a 429 problem with code and no rate headers.
func limited(t *testing.T, r *client.Response, code string) {
	t.Helper()
	notifytest.RequireProblem(t, r, http.StatusTooManyRequests, code)
	require.Empty(t, r.Header.Get("Retry-After"))
	for name := range r.Header {
		require.NotContains(t, http.CanonicalHeaderKey(name), "X-Ratelimit", name)
	}
}

func (b *bundle) putWorkspacePolicy(t *testing.T, body map[string]any) map[string]any {
	t.Helper()
	return notifytest.Decode[map[string]any](t, notifytest.Dash(t, b.env.Owner, "PUT", "/v1/limits/rate/workspace", body), http.StatusOK)
}

func (b *bundle) putKeyPolicy(t *testing.T, keyID string, body map[string]any) map[string]any {
	t.Helper()
	return notifytest.Decode[map[string]any](t, notifytest.Dash(t, b.env.Owner, "PUT", "/v1/limits/rate/api-keys/"+keyID, body), http.StatusOK)
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
