package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/store"
)

func newHook(ws, name, tokenHash string, at time.Time) *notify.InboundHook {
	return &notify.InboundHook{ID: id(), WorkspaceID: ws, Name: name, Format: notify.HookNtfy, Channel: notify.ChannelEmail,
		Addresses: []string{}, RecipientIDs: []string{}, RateLimit: 60, Enabled: true, TokenHash: tokenHash,
		TokenRotatedAt: at, CreatedAt: at, UpdatedAt: at}
}

// testInboundHooks pins the verbs of inbound hooks (issue 36, item 3):
// every field round-trips, names are unique per workspace, the token hash
// finds its hook across workspaces, and another workspace's hook is
// ErrNotFound to every verb that names a workspace.
func testInboundHooks(t *testing.T, db *store.DB) {
	ws1, ws2 := Workspace(t, db), Workspace(t, db)
	a := newHook(ws1, "alerts", "hash-a", t0)
	a.Format, a.Channel, a.Addresses, a.RecipientIDs = notify.HookAlertmanager, notify.ChannelSMS, []string{"01012345678"}, []string{"user-1", "user-2"}
	a.TemplateCode, a.Category, a.RateLimit = "alert", "ops", 5
	b := newHook(ws1, "backups", "hash-b", t0.Add(time.Second))
	b.Enabled = false
	c := newHook(ws2, "alerts", "hash-c", t0)
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		for _, h := range []*notify.InboundHook{b, a, c} {
			require.NoError(t, tx.CreateInboundHook(ctx, h))
		}
		return nil
	})
	conflict(t, db, func(ctx context.Context, tx notify.Tx) error {
		return tx.CreateInboundHook(ctx, newHook(ws1, "alerts", "hash-d", t0))
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.FindInboundHook(ctx, ws1, a.ID)
		require.NoError(t, err)
		require.Equal(t, a, got)
		_, err = tx.FindInboundHook(ctx, ws2, a.ID)
		require.ErrorIs(t, err, notify.ErrNotFound, "another workspace's hook")
		all, err := tx.FindInboundHooks(ctx, ws1)
		require.NoError(t, err)
		require.Equal(t, []*notify.InboundHook{a, b}, all, "by name")
		byToken, err := tx.FindInboundHookByToken(ctx, "hash-c")
		require.NoError(t, err)
		require.Equal(t, c, byToken)
		_, err = tx.FindInboundHookByToken(ctx, "hash-x")
		require.ErrorIs(t, err, notify.ErrNotFound)
		return nil
	})

	// A rotation and an edit: the old hash finds nothing.
	a.TokenHash, a.TokenRotatedAt, a.UpdatedAt = "hash-a2", t0.Add(time.Minute), t0.Add(time.Minute)
	a.Name, a.Addresses, a.RecipientIDs, a.TemplateCode, a.Category, a.Enabled = "alerts-2", []string{}, []string{"user-3"}, "", "", false
	update(t, db, func(ctx context.Context, tx notify.Tx) error { return tx.UpdateInboundHook(ctx, a) })
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.FindInboundHookByToken(ctx, "hash-a2")
		require.NoError(t, err)
		require.Equal(t, a, got)
		_, err = tx.FindInboundHookByToken(ctx, "hash-a")
		require.ErrorIs(t, err, notify.ErrNotFound, "the rotated-away token")
		return nil
	})
	renamed := *b
	renamed.Name = "alerts-2"
	conflict(t, db, func(ctx context.Context, tx notify.Tx) error { return tx.UpdateInboundHook(ctx, &renamed) })
	other := *a
	other.WorkspaceID = ws2
	err := db.Update(context.Background(), func(tx notify.Tx) error { return tx.UpdateInboundHook(context.Background(), &other) })
	require.ErrorIs(t, err, notify.ErrNotFound)
	err = db.Update(context.Background(), func(tx notify.Tx) error { return tx.DeleteInboundHook(context.Background(), ws2, a.ID) })
	require.ErrorIs(t, err, notify.ErrNotFound)
	update(t, db, func(ctx context.Context, tx notify.Tx) error { return tx.DeleteInboundHook(ctx, ws1, a.ID) })
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		_, err := tx.FindInboundHook(ctx, ws1, a.ID)
		require.ErrorIs(t, err, notify.ErrNotFound)
		_, err = tx.FindInboundHookByToken(ctx, "hash-a2")
		require.ErrorIs(t, err, notify.ErrNotFound)
		return nil
	})
}
