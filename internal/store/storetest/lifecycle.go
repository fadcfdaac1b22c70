package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/store"
	"github.com/notifyd/notifyd/internal/store/sqlstore"
)

// The notify.Store methods beyond Update and View: the urgent write of
// the send group commit, the readiness check, and Close.

// testUpdateUrgent: an urgent transaction commits like Update, and one
// whose function fails leaves nothing.
func testUpdateUrgent(t *testing.T, db *store.DB) {
	ws := Workspace(t, db)
	ctx := context.Background()
	require.NoError(t, db.UpdateUrgent(ctx, func(tx notify.Tx) error {
		return tx.UpdateWorkspaceName(ctx, ws, "urgent", t0.Add(time.Second))
	}))
	boom := notify.Invalid("boom")
	require.ErrorIs(t, db.UpdateUrgent(ctx, func(tx notify.Tx) error {
		require.NoError(t, tx.UpdateWorkspaceName(ctx, ws, "rolled back", t0.Add(2*time.Second)))
		return boom
	}), boom)
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		w, err := tx.FindWorkspace(ctx, ws)
		require.NoError(t, err)
		require.Equal(t, "urgent", w.Name)
		require.Equal(t, t0.Add(time.Second), w.UpdatedAt)
		return nil
	})
}

// testPing: a migrated database answers; one whose schema lacks a
// migration is refused, naming it.
func testPing(t *testing.T, db *store.DB) {
	ctx := context.Background()
	require.NoError(t, db.Ping(ctx))
	ms, err := sqlstore.Migrations(db.Dialect)
	require.NoError(t, err)
	first := ms[0]
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		_, err := tx.(*sqlstore.Tx).Conn().Exec(ctx, `DELETE FROM schema_migrations WHERE version = ?`, first.Version)
		return err
	})
	require.ErrorContains(t, db.Ping(ctx), "database schema lacks migration "+first.Name)
}

// testClose: Close answers nil, and afterwards every way in fails with an
// error instead of hanging.
func testClose(t *testing.T, db *store.DB) {
	Workspace(t, db)
	require.NoError(t, db.Close())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	read := func(tx notify.Tx) error {
		_, err := tx.CountWorkspaces(ctx)
		return err
	}
	require.Error(t, db.Ping(ctx), "Ping")
	for name, run := range map[string]func(context.Context, func(notify.Tx) error) error{
		"Update": db.Update, "UpdateUrgent": db.UpdateUrgent, "Batch": db.Batch, "View": db.View, "Lookup": db.Lookup,
	} {
		require.Error(t, run(ctx, read), name)
	}
	require.NoError(t, ctx.Err(), "no call waited for the timeout")
}
