package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/store"
)

func testOTPFraudGuard(t *testing.T, db *store.DB) {
	ws1, ws2 := Workspace(t, db), Workspace(t, db)
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		_, err := tx.FindOTPFraudGuard(ctx, ws1)
		require.ErrorIs(t, err, notify.ErrNotFound)
		return nil
	})
	g := &notify.OTPFraudGuard{WorkspaceID: ws1, Enabled: true, DefaultCountryCode: "82", AllowedCountries: []string{"1", "82"},
		DeniedPrefixes: []string{"+1876", "+447624"}, PrefixDigits: 5, PrefixWindowSeconds: 3600, PrefixMaxSends: 20, ClientWindowSeconds: 600, ClientMaxSends: 10,
		DailyBudget: 500, UpdatedAt: t0}
	update(t, db, func(ctx context.Context, tx notify.Tx) error { return tx.PutOTPFraudGuard(ctx, g) })
	// Replaced: nil allow-list (every country), nil deny-list and zero
	// limits round-trip.
	g2 := &notify.OTPFraudGuard{WorkspaceID: ws1, DefaultCountryCode: "1", UpdatedAt: t0.Add(time.Minute)}
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.FindOTPFraudGuard(ctx, ws1)
		require.NoError(t, err)
		require.Equal(t, g, got)
		_, err = tx.FindOTPFraudGuard(ctx, ws2)
		require.ErrorIs(t, err, notify.ErrNotFound, "per workspace")
		return nil
	})
	update(t, db, func(ctx context.Context, tx notify.Tx) error { return tx.PutOTPFraudGuard(ctx, g2) })
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.FindOTPFraudGuard(ctx, ws1)
		require.NoError(t, err)
		require.Equal(t, g2, got)
		return nil
	})

	// Counters: per workspace, key and window; counts in the order given.
	h := t0.Truncate(time.Hour)
	w := func(key string, start time.Time) notify.OTPFraudWindow {
		return notify.OTPFraudWindow{Key: key, Start: start, End: start.Add(time.Hour)}
	}
	add := func(ws string, windows ...notify.OTPFraudWindow) []int {
		var n []int
		update(t, db, func(ctx context.Context, tx notify.Tx) error {
			var err error
			n, err = tx.AddOTPFraudCounts(ctx, ws, windows)
			return err
		})
		return n
	}
	require.Equal(t, []int{1, 1, 1}, add(ws1, w("p", h), w("c", h), w("b", h)))
	require.Equal(t, []int{2, 2}, add(ws1, w("b", h), w("p", h)))
	require.Equal(t, []int{1}, add(ws2, w("p", h)))
	require.Equal(t, []int{1}, add(ws1, w("p", h.Add(time.Hour))))
	require.Equal(t, []int{}, add(ws1))
	// A rolled-back increment leaves no trace.
	ctx := context.Background()
	require.Error(t, db.Update(ctx, func(tx notify.Tx) error {
		_, err := tx.AddOTPFraudCounts(ctx, ws1, []notify.OTPFraudWindow{w("p", h)})
		require.NoError(t, err)
		return notify.Invalid("rollback")
	}))
	require.Equal(t, []int{3}, add(ws1, w("p", h)))

	// Deletion by window end, every workspace.
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		n, err := tx.DeleteOTPFraudCountersEndedBefore(ctx, h.Add(time.Hour+time.Second))
		require.NoError(t, err)
		require.Equal(t, 4, n, "ws1's p, c, b and ws2's p of the first hour")
		return nil
	})
	require.Equal(t, []int{1, 2}, add(ws1, w("p", h), w("p", h.Add(time.Hour))))
}

// testOTPFraudCountsConcurrent: increments from concurrent transactions
// (on PostgreSQL, of several connections) are all counted.
func testOTPFraudCountsConcurrent(t *testing.T, db *store.DB) {
	ctx := context.Background()
	ws := Workspace(t, db)
	h := t0.Truncate(time.Hour)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := []string{"p1", "p2"}[i%2]
			require.NoError(t, db.Update(ctx, func(tx notify.Tx) error {
				_, err := tx.AddOTPFraudCounts(ctx, ws, []notify.OTPFraudWindow{
					{Key: key, Start: h, End: h.Add(time.Hour)}, {Key: "b", Start: h, End: h.Add(24 * time.Hour)}})
				return err
			}))
		}()
	}
	wg.Wait()
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		n, err := tx.AddOTPFraudCounts(ctx, ws, []notify.OTPFraudWindow{{Key: "p1", Start: h}, {Key: "p2", Start: h}, {Key: "b", Start: h}})
		require.NoError(t, err)
		require.Equal(t, []int{5, 5, 9}, n)
		return nil
	})
}
