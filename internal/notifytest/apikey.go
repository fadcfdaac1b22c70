package notifytest

import (
	"context"
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
