package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/store"
)

func testDispatchWorkers(t *testing.T, db *store.DB) {
	a := &notify.DispatchWorker{ID: "a-" + id(), Demand: map[string]float64{"workspace:w": 12.5, "provider:w:p": 3}, HeartbeatAt: t0}
	b := &notify.DispatchWorker{ID: "b-" + id(), HeartbeatAt: t0.Add(-5 * time.Second)}
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.NoError(t, tx.PutDispatchWorker(ctx, a))
		return tx.PutDispatchWorker(ctx, b)
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		all, err := tx.FindDispatchWorkers(ctx, t0.Add(-time.Minute))
		require.NoError(t, err)
		require.Equal(t, []*notify.DispatchWorker{a, {ID: b.ID, Demand: map[string]float64{}, HeartbeatAt: b.HeartbeatAt}}, all)
		fresh, err := tx.FindDispatchWorkers(ctx, t0.Add(-3*time.Second))
		require.NoError(t, err)
		require.Equal(t, []*notify.DispatchWorker{a}, fresh, "rows before since are left out")
		return nil
	})
	// A heartbeat replaces the row.
	a2 := &notify.DispatchWorker{ID: a.ID, Demand: map[string]float64{"workspace:w": 1}, HeartbeatAt: t0.Add(time.Second)}
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.NoError(t, tx.PutDispatchWorker(ctx, a2))
		n, err := tx.DeleteStaleDispatchWorkers(ctx, t0.Add(-3*time.Second))
		require.NoError(t, err)
		require.Equal(t, 1, n)
		return nil
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		all, err := tx.FindDispatchWorkers(ctx, time.Time{})
		require.NoError(t, err)
		require.Equal(t, []*notify.DispatchWorker{a2}, all)
		return nil
	})
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.NoError(t, tx.DeleteDispatchWorker(ctx, a.ID))
		return tx.DeleteDispatchWorker(ctx, "unknown")
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		all, err := tx.FindDispatchWorkers(ctx, time.Time{})
		require.NoError(t, err)
		require.Empty(t, all)
		return nil
	})
}
