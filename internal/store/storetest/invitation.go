package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/store"
)

func testInvitations(t *testing.T, db *store.DB) {
	ws1, ws2 := Workspace(t, db), Workspace(t, db)
	inviter := &notify.User{ID: id(), Email: "inviter@example.com", PasswordHash: "h", CreatedAt: t0}
	u := &notify.User{ID: id(), Email: "invitee@example.com", PasswordHash: "h", CreatedAt: t0}
	other := &notify.User{ID: id(), Email: "other@example.com", PasswordHash: "h", CreatedAt: t0}
	day := 24 * time.Hour
	first := &notify.Invitation{ID: id(), WorkspaceID: ws1, UserID: u.ID, Role: notify.RoleViewer, InvitedBy: inviter.ID,
		CreatedAt: t0, ExpiresAt: t0.Add(7 * day)}
	second := &notify.Invitation{ID: id(), WorkspaceID: ws2, UserID: u.ID, Role: notify.RoleAdmin,
		CreatedAt: t0.Add(time.Second), ExpiresAt: t0.Add(time.Hour)}
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		for _, x := range []*notify.User{inviter, u, other} {
			require.NoError(t, tx.CreateUser(ctx, x))
		}
		require.NoError(t, tx.PutInvitation(ctx, first))
		return tx.PutInvitation(ctx, second)
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.FindInvitation(ctx, u.ID, first.ID, t0)
		require.NoError(t, err)
		require.Equal(t, &notify.Invitation{ID: first.ID, WorkspaceID: ws1, WorkspaceName: "ws", UserID: u.ID, Email: u.Email,
			Role: notify.RoleViewer, InvitedBy: inviter.ID, InvitedByEmail: inviter.Email, CreatedAt: t0, ExpiresAt: t0.Add(7 * day)}, got)
		// Another user's invitation is not found, nor an unknown id.
		_, err = tx.FindInvitation(ctx, other.ID, first.ID, t0)
		require.ErrorIs(t, err, notify.ErrNotFound)
		_, err = tx.FindInvitation(ctx, u.ID, id(), t0)
		require.ErrorIs(t, err, notify.ErrNotFound)
		// Expired: neither found nor listed.
		_, err = tx.FindInvitation(ctx, u.ID, second.ID, t0.Add(time.Hour))
		require.ErrorIs(t, err, notify.ErrNotFound)
		all, err := tx.FindInvitationsOfUser(ctx, u.ID, t0)
		require.NoError(t, err)
		require.Len(t, all, 2)
		require.Equal(t, []string{first.ID, second.ID}, []string{all[0].ID, all[1].ID}, "oldest first")
		require.Empty(t, all[1].InvitedBy, "no inviter")
		require.Empty(t, all[1].InvitedByEmail)
		later, err := tx.FindInvitationsOfUser(ctx, u.ID, t0.Add(time.Hour))
		require.NoError(t, err)
		require.Len(t, later, 1)
		require.Equal(t, first.ID, later[0].ID)
		none, err := tx.FindInvitationsOfUser(ctx, other.ID, t0)
		require.NoError(t, err)
		require.Empty(t, none)
		return nil
	})
	// A second invitation to the same workspace replaces the first and keeps its id.
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		return tx.PutInvitation(ctx, &notify.Invitation{ID: id(), WorkspaceID: ws1, UserID: u.ID, Role: notify.RoleOwner,
			CreatedAt: t0.Add(time.Minute), ExpiresAt: t0.Add(8 * day)})
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.FindInvitation(ctx, u.ID, first.ID, t0.Add(7*day))
		require.NoError(t, err)
		require.Equal(t, notify.RoleOwner, got.Role)
		require.Equal(t, t0.Add(time.Minute), got.CreatedAt)
		require.Equal(t, t0.Add(8*day), got.ExpiresAt)
		require.Empty(t, got.InvitedBy)
		return nil
	})
	// Deletes: one per workspace and user; then only expired ones.
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.ErrorIs(t, tx.DeleteInvitation(ctx, ws1, other.ID), notify.ErrNotFound)
		n, err := tx.DeleteExpiredInvitations(ctx, t0.Add(time.Hour))
		require.NoError(t, err)
		require.Equal(t, 1, n, "only the ws2 invitation had expired")
		require.ErrorIs(t, tx.DeleteInvitation(ctx, ws2, u.ID), notify.ErrNotFound)
		require.NoError(t, tx.DeleteInvitation(ctx, ws1, u.ID))
		require.ErrorIs(t, tx.DeleteInvitation(ctx, ws1, u.ID), notify.ErrNotFound)
		all, err := tx.FindInvitationsOfUser(ctx, u.ID, t0)
		require.NoError(t, err)
		require.Empty(t, all)
		return nil
	})
}
