package storetest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/store"
)

// testTestMode (issue 36): a test-mode key keeps its flag; a test
// request keeps it through both acceptance paths (with an idempotency
// key, row by row; without, in bulk: COPY on PostgreSQL), the claim and
// the lookups; CountActivity tells test traffic apart.
func testTestMode(t *testing.T, db *store.DB) {
	ws := Workspace(t, db)
	k := &notify.APIKey{ID: id(), WorkspaceID: ws, KeyID: notify.TestKeyPrefix + id()[:8], Name: "staging", Scopes: []string{notify.ScopeNotificationsSend},
		Status: notify.APIKeyActive, SecretHash: "h", HMACSecretEnc: "e", CreatedAt: t0, UpdatedAt: t0, Test: true}
	live := &notify.APIKey{ID: id(), WorkspaceID: ws, KeyID: "nk_" + id()[:8], Name: "prod", Scopes: []string{notify.ScopeNotificationsSend},
		Status: notify.APIKeyActive, SecretHash: "h", HMACSecretEnc: "e", CreatedAt: t0, UpdatedAt: t0}
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.NoError(t, tx.CreateAPIKey(ctx, k))
		return tx.CreateAPIKey(ctx, live)
	})
	keyed, plain, other := newRequest(ws, "idem-"+id()), newRequest(ws, ""), newRequest(ws, "")
	keyed.Test, plain.Test = true, true
	accepts := []*notify.Accept{{Request: keyed, MaxAttempts: 3}, {Request: plain, MaxAttempts: 3}, {Request: other, MaxAttempts: 3}}
	update(t, db, func(ctx context.Context, tx notify.Tx) error { return tx.AcceptRequests(ctx, accepts, t0) })
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.FindAPIKeyByKeyID(ctx, k.KeyID)
		require.NoError(t, err)
		require.True(t, got.Test)
		got, err = tx.FindAPIKey(ctx, ws, live.ID)
		require.NoError(t, err)
		require.False(t, got.Test)
		for _, r := range []*notify.Request{keyed, plain, other} {
			stored, err := tx.FindRequest(ctx, ws, r.ID)
			require.NoError(t, err)
			require.Equal(t, r.Test, stored.Test, r.IdempotencyKey)
		}
		c, err := tx.CountActivity(ctx, ws, t0.Add(-1), t0.Add(1))
		require.NoError(t, err)
		require.Equal(t, 3, c.TotalRequests, "test traffic is in the totals")
		require.Equal(t, 2, c.TestRequests)
		require.Equal(t, map[string]int{string(notify.StatusQueued): 2}, c.TestByStatus)
		for _, want := range []bool{true, false} {
			rs, err := tx.FindRequests(ctx, ws, notify.RequestFilter{Test: &want, Limit: 10})
			require.NoError(t, err)
			require.Len(t, rs, map[bool]int{true: 2, false: 1}[want])
			for _, r := range rs {
				require.Equal(t, want, r.Test)
			}
		}
		return nil
	})
	// The claim hands the flag to the worker.
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		reqs, _, err := tx.ClaimRequests(ctx, []*notify.Job{accepts[1].Job, accepts[2].Job}, t0, "w")
		require.NoError(t, err)
		require.Len(t, reqs, 2)
		for _, r := range reqs {
			require.Equal(t, r.ID == plain.ID, r.Test)
		}
		return nil
	})
}
