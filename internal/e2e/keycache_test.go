package e2e_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/notifytest"
)

// TestKeyChangeInAnotherProcess: a process that cached an API key for
// sends still applies a rotation, a scope change or a revocation made
// through another process to the very next send (the send group commit
// confirms the cached key against the stored one).
func TestKeyChangeInAnotherProcess(t *testing.T) {
	t.Parallel()
	env := notifytest.StartDaemon(t)
	peer := env.StartPeer(t, nil, notifytest.WithRole("api"))
	k := createKey(t, env.Owner, map[string]any{"name": "cached", "scopes": []string{"notifications:send"}})
	send := func(key, secret string) *client.Response {
		c := client.New(peer.URL())
		c.APIKey, c.HMACSecret = key, secret
		r, err := c.Signed(context.Background(), "POST", "/v1/notifications", map[string]any{"channel": "sms",
			"recipient": map[string]any{"address": "01012345678"}, "content": map[string]any{"text": "hi"}})
		require.NoError(t, err)
		return r
	}
	requireStatus(t, send(k.Key, k.HMACSecret), http.StatusCreated) // the peer caches the key

	// Rotated through the first process: the old secrets stop at once on
	// the peer, the new ones work there at once.
	r := do(t, env.Owner, "POST", "/v1/api-keys/"+k.APIKey.ID+"/rotate", nil)
	requireStatus(t, r, http.StatusOK)
	rot := decode[newKeyBody](t, r)
	requireStatus(t, send(k.Key, k.HMACSecret), http.StatusUnauthorized)
	requireStatus(t, send(rot.Key, rot.HMACSecret), http.StatusCreated)

	// A scope taken away elsewhere: refused on the peer at once.
	r = do(t, env.Owner, "PATCH", "/v1/api-keys/"+k.APIKey.ID, map[string]any{"scopes": []string{"notifications:read"}})
	requireStatus(t, r, http.StatusOK)
	requireStatus(t, send(rot.Key, rot.HMACSecret), http.StatusForbidden)
	r = do(t, env.Owner, "PATCH", "/v1/api-keys/"+k.APIKey.ID, map[string]any{"scopes": []string{"notifications:send"}})
	requireStatus(t, r, http.StatusOK)
	requireStatus(t, send(rot.Key, rot.HMACSecret), http.StatusCreated)

	// Revoked elsewhere: the peer's cached key no longer sends.
	requireStatus(t, do(t, env.Owner, "POST", "/v1/api-keys/"+k.APIKey.ID+"/revoke", nil), http.StatusOK)
	r = send(rot.Key, rot.HMACSecret)
	requireStatus(t, r, http.StatusUnauthorized)
	require.Equal(t, "Invalid API key", r.Problem().Detail)
}
