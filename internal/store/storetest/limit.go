package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/store"
)

func testLimits(t *testing.T, open Opener) {
	runVerbs(t, open, []verb{
		{"PutRateLimitPolicy", testPutRateLimitPolicy, perWorkspace},
		{"IncrementRate", testIncrementRate, allWorkspaces},
		{"DeleteRateCounters", testDeleteRateCounters, allWorkspaces},
		{"PutDispatchLimit", testPutDispatchLimit, perWorkspace},
		{"DeleteDispatchLimit", testDeleteDispatchLimit, perWorkspace},
	})
}

// testPutRateLimitPolicy: policies upsert by (workspace, key), "" is the
// workspace.
func testPutRateLimitPolicy(t *testing.T, db *store.DB) {
	ws1, ws2 := Workspace(t, db), Workspace(t, db)
	keyID := id()
	wp := &notify.RateLimitPolicy{ID: id(), WorkspaceID: ws1, WindowSeconds: 60, MaxRequests: 10, Enabled: true, UpdatedAt: t0}
	kp := &notify.RateLimitPolicy{ID: id(), WorkspaceID: ws1, APIKeyID: keyID, WindowSeconds: 1, MaxRequests: 3, Enabled: true, UpdatedAt: t0}
	firstID := wp.ID
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.NoError(t, tx.PutRateLimitPolicy(ctx, wp))
		return tx.PutRateLimitPolicy(ctx, kp)
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		_, err := tx.FindRateLimitPolicy(ctx, ws2, "")
		require.ErrorIs(t, err, notify.ErrNotFound)
		_, err = tx.FindRateLimitPolicy(ctx, ws2, keyID)
		require.ErrorIs(t, err, notify.ErrNotFound)
		ps, err := tx.FindRateLimitPolicies(ctx, ws2)
		require.NoError(t, err)
		require.Empty(t, ps)
		return nil
	})
	up := &notify.RateLimitPolicy{ID: id(), WorkspaceID: ws1, WindowSeconds: 120, MaxRequests: 5, Enabled: false, UpdatedAt: t0.Add(time.Second)}
	update(t, db, func(ctx context.Context, tx notify.Tx) error { return tx.PutRateLimitPolicy(ctx, up) })
	require.Equal(t, &notify.RateLimitPolicy{ID: firstID, WorkspaceID: ws1, WindowSeconds: 120, MaxRequests: 5, Enabled: false,
		UpdatedAt: t0.Add(time.Second)}, up, "an upsert keeps the id and reads back the stored row")
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		p, err := tx.FindRateLimitPolicy(ctx, ws1, keyID)
		require.NoError(t, err)
		require.Equal(t, kp, p)
		ps, err := tx.FindRateLimitPolicies(ctx, ws1)
		require.NoError(t, err)
		require.Equal(t, []*notify.RateLimitPolicy{up, kp}, ps)
		return nil
	})
}

// rateW0 and rateW1 are the two fixed windows the counter tests count in.
var rateW0, rateW1 = t0.Truncate(time.Minute), t0.Truncate(time.Minute).Add(time.Minute)

// rateCounters counts 3 in w0 and 1 in w1 for "w:a", 1 in w0 for "w:b",
// checking first that a missing counter reads zero.
func rateCounters(t *testing.T, db *store.DB) {
	t.Helper()
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		n, err := tx.RateCount(ctx, "w:a", rateW0)
		require.NoError(t, err)
		require.Zero(t, n)
		for range 3 {
			require.NoError(t, tx.IncrementRate(ctx, "w:a", rateW0))
		}
		require.NoError(t, tx.IncrementRate(ctx, "w:a", rateW1))
		require.NoError(t, tx.IncrementRate(ctx, "w:b", rateW0))
		return nil
	})
}

// testIncrementRate: fixed windows per scope key.
func testIncrementRate(t *testing.T, db *store.DB) {
	rateCounters(t, db)
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		for _, c := range []struct {
			key  string
			at   time.Time
			want int
		}{{"w:a", rateW0, 3}, {"w:a", rateW1, 1}, {"w:b", rateW0, 1}, {"w:b", rateW1, 0}} {
			n, err := tx.RateCount(ctx, c.key, c.at)
			require.NoError(t, err)
			require.Equal(t, c.want, n, "%s %s", c.key, c.at)
		}
		return nil
	})
}

func testDeleteRateCounters(t *testing.T, db *store.DB) {
	rateCounters(t, db)
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		n, err := tx.DeleteRateCounters(ctx, rateW1)
		require.NoError(t, err)
		require.Equal(t, 2, n)
		c, err := tx.RateCount(ctx, "w:a", rateW1)
		require.NoError(t, err)
		require.Equal(t, 1, c)
		return nil
	})
}

// dispatchLimits stores a workspace limit and a provider limit of ws1 and
// a workspace limit of ws2.
func dispatchLimits(t *testing.T, db *store.DB) (ws1, ws2 string, l1, l2, l3 *notify.DispatchLimit) {
	t.Helper()
	ws1, ws2 = Workspace(t, db), Workspace(t, db)
	l1 = &notify.DispatchLimit{ID: id(), WorkspaceID: ws1, Scope: notify.DispatchScopeWorkspace, RatePerSecond: 10, Enabled: true, CreatedAt: t0, UpdatedAt: t0}
	l2 = &notify.DispatchLimit{ID: id(), WorkspaceID: ws1, Scope: notify.DispatchScopeProvider, TargetID: "p1", RatePerSecond: 5, Enabled: true,
		CreatedAt: t0.Add(time.Second), UpdatedAt: t0.Add(time.Second)}
	l3 = &notify.DispatchLimit{ID: id(), WorkspaceID: ws2, Scope: notify.DispatchScopeWorkspace, RatePerSecond: 7, Enabled: true, CreatedAt: t0, UpdatedAt: t0}
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.NoError(t, tx.PutDispatchLimit(ctx, l1))
		require.NoError(t, tx.PutDispatchLimit(ctx, l2))
		return tx.PutDispatchLimit(ctx, l3)
	})
	return ws1, ws2, l1, l2, l3
}

// testPutDispatchLimit: limits upsert by (workspace, scope, target).
func testPutDispatchLimit(t *testing.T, db *store.DB) {
	ws1, _, l1, l2, _ := dispatchLimits(t, db)
	again := &notify.DispatchLimit{ID: id(), WorkspaceID: ws1, Scope: notify.DispatchScopeWorkspace, RatePerSecond: 20, Enabled: false,
		CreatedAt: t0.Add(time.Hour), UpdatedAt: t0.Add(time.Hour)}
	update(t, db, func(ctx context.Context, tx notify.Tx) error { return tx.PutDispatchLimit(ctx, again) })
	require.Equal(t, &notify.DispatchLimit{ID: l1.ID, WorkspaceID: ws1, Scope: notify.DispatchScopeWorkspace, RatePerSecond: 20, Enabled: false,
		CreatedAt: t0, UpdatedAt: t0.Add(time.Hour)}, again, "an upsert keeps id and createdAt")
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		ls, err := tx.FindDispatchLimits(ctx, ws1)
		require.NoError(t, err)
		require.Equal(t, []*notify.DispatchLimit{again, l2}, ls)
		return nil
	})
}

func testDeleteDispatchLimit(t *testing.T, db *store.DB) {
	ws1, ws2, l1, l2, l3 := dispatchLimits(t, db)
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.ErrorIs(t, tx.DeleteDispatchLimit(ctx, ws2, l2.ID), notify.ErrNotFound, "another workspace's limit")
		require.NoError(t, tx.DeleteDispatchLimit(ctx, ws1, l2.ID))
		require.ErrorIs(t, tx.DeleteDispatchLimit(ctx, ws1, l2.ID), notify.ErrNotFound)
		return nil
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		ls, err := tx.FindDispatchLimits(ctx, ws1)
		require.NoError(t, err)
		require.Equal(t, []*notify.DispatchLimit{l1}, ls)
		ls, err = tx.FindDispatchLimits(ctx, ws2)
		require.NoError(t, err)
		require.Equal(t, []*notify.DispatchLimit{l3}, ls)
		return nil
	})
}

// testLockRateCount: a missing counter reads 0 and exists afterwards, a
// set count is read back, and a rolled-back set leaves no trace.
func testLockRateCount(t *testing.T, db *store.DB) {
	ctx := context.Background()
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		n, err := tx.LockRateCount(ctx, "w:x:60", t0)
		require.NoError(t, err)
		require.Equal(t, 0, n)
		require.NoError(t, tx.SetRateCount(ctx, "w:x:60", t0, 2))
		n, err = tx.LockRateCount(ctx, "w:x:60", t0)
		require.NoError(t, err)
		require.Equal(t, 2, n)
		return nil
	})
	err := db.Update(ctx, func(tx notify.Tx) error {
		n, err := tx.LockRateCount(ctx, "w:x:60", t0)
		require.NoError(t, err)
		require.NoError(t, tx.SetRateCount(ctx, "w:x:60", t0, n+5))
		return notify.Invalid("refused")
	})
	require.Error(t, err)
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		n, err := tx.RateCount(ctx, "w:x:60", t0)
		require.NoError(t, err)
		require.Equal(t, 2, n, "rolled back")
		n, err = tx.RateCount(ctx, "w:x:60", t0.Add(time.Minute))
		require.NoError(t, err)
		require.Equal(t, 0, n, "another window")
		return nil
	})
}

// testRateCountsMany: many counters are read and added to in one
// statement each; a missing counter reads 0 and is created by the
// addition; windows of one scope are apart.
func testRateCountsMany(t *testing.T, db *store.DB) {
	a := notify.RateWindow{ScopeKey: "w:m:60", Start: t0}
	b := notify.RateWindow{ScopeKey: "k:m:60", Start: t0}
	later := notify.RateWindow{ScopeKey: "w:m:60", Start: t0.Add(time.Minute)}
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.RateCounts(ctx, []notify.RateWindow{a, b})
		require.NoError(t, err)
		require.Equal(t, []int{0, 0}, got)
		a.N, b.N = 3, 1
		got, err = tx.AddRateCounts(ctx, []notify.RateWindow{a, b})
		require.NoError(t, err)
		require.Equal(t, []int{3, 1}, got)
		a.N, later.N = 2, 7
		got, err = tx.AddRateCounts(ctx, []notify.RateWindow{later, a})
		require.NoError(t, err)
		require.Equal(t, []int{7, 5}, got, "answers in the order given")
		return nil
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.RateCounts(ctx, []notify.RateWindow{b, later, a})
		require.NoError(t, err)
		require.Equal(t, []int{1, 7, 5}, got)
		n, err := tx.RateCount(ctx, "w:m:60", t0)
		require.NoError(t, err)
		require.Equal(t, 5, n)
		return nil
	})
}

// testDispatchTarget: a limit's target is found in whichever workspace
// holds it, by scope; an id of the other kind or of nothing is not found.
func testDispatchTarget(t *testing.T, db *store.DB) {
	ws1, ws2 := Workspace(t, db), Workspace(t, db)
	p := emailProvider(t, db, ws1, "mailx_email")
	k := &notify.APIKey{ID: id(), WorkspaceID: ws2, KeyID: "nk_" + id(), Name: "k", Scopes: []string{}, Status: notify.APIKeyActive,
		SecretHash: "sh", HMACSecretEnc: "enc", CreatedAt: t0, UpdatedAt: t0}
	update(t, db, func(ctx context.Context, tx notify.Tx) error { return tx.CreateAPIKey(ctx, k) })
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.DispatchTargetWorkspace(ctx, notify.DispatchScopeProvider, p.ID)
		require.NoError(t, err)
		require.Equal(t, ws1, got)
		got, err = tx.DispatchTargetWorkspace(ctx, notify.DispatchScopeAPIKey, k.ID)
		require.NoError(t, err)
		require.Equal(t, ws2, got)
		for _, c := range []struct{ scope, id string }{{notify.DispatchScopeProvider, k.ID}, {notify.DispatchScopeAPIKey, p.ID},
			{notify.DispatchScopeProvider, "prov-1"}, {notify.DispatchScopeAPIKey, id()}} {
			_, err = tx.DispatchTargetWorkspace(ctx, c.scope, c.id)
			require.ErrorIs(t, err, notify.ErrNotFound, c)
		}
		return nil
	})
}
