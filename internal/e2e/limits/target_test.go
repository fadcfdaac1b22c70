package limits_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notifytest"
)

// TestDispatchLimitForeignTarget (issue 17): a dispatch limit naming
// another workspace's provider account or API key is 404 like every
// cross-workspace id (it was stored and limited nothing); the workspace's
// own targets, and ids that name nothing yet, are taken as before.
func TestDispatchLimitForeignTarget(t *testing.T) {
	t.Parallel()
	b := setup(t)
	other, _ := b.env.NewWorkspace(t, "Other", "other@example.com")
	r, err := other.Dashboard(ctx, "POST", "/v1/providers", map[string]any{"providerKind": "vendora_sms", "displayName": "theirs"})
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	var prov struct {
		Provider struct {
			ID string `json:"id"`
		} `json:"provider"`
	}
	require.NoError(t, r.Decode(&prov))
	_, otherKey, err := other.CreateAPIKey(ctx, "k", "notifications:send")
	require.NoError(t, err)

	for scope, target := range map[string]string{"provider": prov.Provider.ID, "apiKey": otherKey} {
		notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, "PUT", "/v1/limits/dispatch", map[string]any{"scope": scope, "targetId": target, "ratePerSecond": 1}),
			http.StatusNotFound, "SVC-40400")
	}
	require.Empty(t, b.listDispatch(t), "nothing stored")

	// Their owner limits them; ours limits our own and names the future.
	r, err = other.Dashboard(ctx, "PUT", "/v1/limits/dispatch", map[string]any{"scope": "provider", "targetId": prov.Provider.ID, "ratePerSecond": 1})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	b.putDispatch(t, map[string]any{"scope": "provider", "targetId": b.smsProvider(t), "ratePerSecond": 2})
	b.putDispatch(t, map[string]any{"scope": "apiKey", "targetId": b.keyID, "ratePerSecond": 2})
	b.putDispatch(t, map[string]any{"scope": "provider", "targetId": "prov-1", "ratePerSecond": 2})
	require.Len(t, b.listDispatch(t), 3)
}
