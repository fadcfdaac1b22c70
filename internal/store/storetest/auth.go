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

func testLoginCounters(t *testing.T, db *store.DB) {
	exp := t0.Add(time.Hour)
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		_, err := tx.FindLoginCounter(ctx, "k1", t0)
		require.ErrorIs(t, err, notify.ErrNotFound)
		c, err := tx.CountLoginAttempt(ctx, "k1", t0, exp)
		require.NoError(t, err)
		require.Equal(t, notify.LoginCounter{Key: "k1", Attempts: 1, BlockedUntil: time.UnixMilli(0).UTC(), ExpiresAt: exp}, *c)
		c, err = tx.CountLoginAttempt(ctx, "k1", t0, exp.Add(time.Second))
		require.NoError(t, err)
		require.Equal(t, 2, c.Attempts)
		// A block is kept by later counts.
		require.NoError(t, tx.PutLoginCounter(ctx, &notify.LoginCounter{Key: "k1", Attempts: 2, BlockedUntil: t0.Add(time.Minute), ExpiresAt: exp}))
		c, err = tx.CountLoginAttempt(ctx, "k1", t0.Add(time.Second), exp)
		require.NoError(t, err)
		require.Equal(t, 3, c.Attempts)
		require.Equal(t, t0.Add(time.Minute), c.BlockedUntil)
		require.NoError(t, tx.PutLoginCounter(ctx, &notify.LoginCounter{Key: "k2", Attempts: 0, ExpiresAt: t0.Add(time.Minute)}))
		return nil
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		c, err := tx.FindLoginCounter(ctx, "k1", t0)
		require.NoError(t, err)
		require.Equal(t, notify.LoginCounter{Key: "k1", Attempts: 3, BlockedUntil: t0.Add(time.Minute), ExpiresAt: exp}, *c)
		// Expired counters are not found.
		_, err = tx.FindLoginCounter(ctx, "k1", exp)
		require.ErrorIs(t, err, notify.ErrNotFound)
		return nil
	})
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		// An expired counter starts again, unblocked.
		c, err := tx.CountLoginAttempt(ctx, "k1", exp, exp.Add(time.Hour))
		require.NoError(t, err)
		require.Equal(t, 1, c.Attempts)
		require.Equal(t, time.UnixMilli(0).UTC(), c.BlockedUntil)
		n, err := tx.DeleteExpiredLoginCounters(ctx, t0.Add(time.Minute))
		require.NoError(t, err)
		require.Equal(t, 1, n) // k2
		_, err = tx.FindLoginCounter(ctx, "k2", t0)
		require.ErrorIs(t, err, notify.ErrNotFound)
		require.NoError(t, tx.DeleteLoginCounter(ctx, "k1"))
		require.NoError(t, tx.DeleteLoginCounter(ctx, "k1")) // missing: no error
		_, err = tx.FindLoginCounter(ctx, "k1", t0)
		require.ErrorIs(t, err, notify.ErrNotFound)
		return nil
	})
}

// testLoginCountersConcurrent counts one key from many transactions at
// once (many connections on PostgreSQL): none is lost.
func testLoginCountersConcurrent(t *testing.T, db *store.DB) {
	const n = 20
	var wg sync.WaitGroup
	seen := make([]int, n)
	for i := range n {
		wg.Go(func() {
			ctx := context.Background()
			require.NoError(t, db.Update(ctx, func(tx notify.Tx) error {
				c, err := tx.CountLoginAttempt(ctx, "burst", t0, t0.Add(time.Hour))
				if err == nil {
					seen[i] = c.Attempts
				}
				return err
			}))
		})
	}
	wg.Wait()
	require.ElementsMatch(t, func() []int {
		out := make([]int, n)
		for i := range out {
			out[i] = i + 1
		}
		return out
	}(), seen, "each transaction saw its own count")
}

func testSessionsOfUser(t *testing.T, db *store.DB) {
	ws := Workspace(t, db)
	u1 := &notify.User{ID: id(), Email: "u1@example.com", PasswordHash: "h", CreatedAt: t0}
	u2 := &notify.User{ID: id(), Email: "u2@example.com", PasswordHash: "h", CreatedAt: t0}
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.NoError(t, tx.CreateUser(ctx, u1))
		require.NoError(t, tx.CreateUser(ctx, u2))
		for _, s := range []*notify.Session{
			{TokenHash: "a1", UserID: u1.ID, WorkspaceID: ws}, {TokenHash: "a2", UserID: u1.ID}, {TokenHash: "a3", UserID: u1.ID},
			{TokenHash: "b1", UserID: u2.ID, WorkspaceID: ws},
		} {
			s.ExpiresAt, s.CreatedAt = t0.Add(time.Hour), t0
			require.NoError(t, tx.CreateSession(ctx, s))
		}
		return nil
	})
	alive := func(hash string) bool {
		var ok bool
		view(t, db, func(ctx context.Context, tx notify.Tx) error {
			_, err := tx.FindSession(ctx, hash, t0)
			ok = err == nil
			return nil
		})
		return ok
	}
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		n, err := tx.DeleteSessionsOfUser(ctx, u1.ID, "a2")
		require.NoError(t, err)
		require.Equal(t, 2, n)
		return nil
	})
	require.False(t, alive("a1"))
	require.True(t, alive("a2"))
	require.False(t, alive("a3"))
	require.True(t, alive("b1"), "another user's session stays")
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		n, err := tx.DeleteSessionsOfUser(ctx, u1.ID, "")
		require.NoError(t, err)
		require.Equal(t, 1, n)
		return nil
	})
	require.False(t, alive("a2"))
	require.True(t, alive("b1"))
}
