package notifytest

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
)

// RegisterRoute registers a provider account of kind with configJson cfg
// through owner's dashboard client and routes channel to it alone
// (priority 1); it returns the account's id.
func RegisterRoute(t testing.TB, owner *client.Client, channel, kind string, cfg map[string]string) string {
	t.Helper()
	ctx := context.Background()
	r, err := owner.Dashboard(ctx, "POST", "/v1/providers", map[string]any{"providerKind": kind, "displayName": kind, "configJson": cfg})
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	var out struct {
		Provider struct {
			ID string `json:"id"`
		} `json:"provider"`
	}
	require.NoError(t, r.Decode(&out))
	r, err = owner.Dashboard(ctx, "PUT", "/v1/routes", map[string]any{"routes": []map[string]any{
		{"channel": channel, "providerAccountId": out.Provider.ID, "priority": 1}}})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	return out.Provider.ID
}

// Fault queues a fault in the simulator (POST /_sim/faults): f holds
// kind, and status, vendorCode, count and the other fault fields.
func (e *Env) Fault(t testing.TB, f map[string]any) {
	t.Helper()
	c := client.New(e.SimURL)
	r, err := c.Dashboard(context.Background(), "POST", "/_sim/faults", f)
	require.NoError(t, err)
	require.Less(t, r.Status, 300, string(r.Body))
}
