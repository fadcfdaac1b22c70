package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/store"
)

// invitationSet is a user invited to ws1 by an inviter for a week and to
// ws2 by nobody for an hour, and a user with no invitation.
type invitationSet struct {
	ws1, ws2          string
	inviter, u, other *notify.User
	first, second     *notify.Invitation
}

const day = 24 * time.Hour

func invitationFixture(t *testing.T, db *store.DB) *invitationSet {
	t.Helper()
	ws1, ws2 := Workspace(t, db), Workspace(t, db)
	inviter := &notify.User{ID: id(), Email: "inviter-" + id() + "@example.com", PasswordHash: "h", CreatedAt: t0}
	u := &notify.User{ID: id(), Email: "invitee-" + id() + "@example.com", PasswordHash: "h", CreatedAt: t0}
	other := &notify.User{ID: id(), Email: "other-" + id() + "@example.com", PasswordHash: "h", CreatedAt: t0}
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
	return &invitationSet{ws1: ws1, ws2: ws2, inviter: inviter, u: u, other: other, first: first, second: second}
}

func testInvitations(t *testing.T, open Opener) {
	runVerbs(t, open, []verb{
		{"FindInvitation", testFindInvitation, perWorkspace},
		{"FindInvitationsOfUser", testFindInvitationsOfUser, perWorkspace},
		{"PutInvitation", testPutInvitation, perWorkspace},
		{"DeleteInvitation", testDeleteInvitation, perWorkspace},
		{"DeleteInvitationByID", testDeleteInvitationByID, perWorkspace},
		{"DeleteExpiredInvitations", testDeleteExpiredInvitations, allWorkspaces},
	})
}

func testFindInvitation(t *testing.T, db *store.DB) {
	s := invitationFixture(t, db)
	u, first := s.u, s.first
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.FindInvitation(ctx, u.ID, first.ID, t0)
		require.NoError(t, err)
		require.Equal(t, &notify.Invitation{ID: first.ID, WorkspaceID: s.ws1, WorkspaceName: "ws", UserID: u.ID, Email: u.Email,
			Role: notify.RoleViewer, InvitedBy: s.inviter.ID, InvitedByEmail: s.inviter.Email, CreatedAt: t0, ExpiresAt: t0.Add(7 * day)}, got)
		// Another user's invitation is not found, nor an unknown id.
		_, err = tx.FindInvitation(ctx, s.other.ID, first.ID, t0)
		require.ErrorIs(t, err, notify.ErrNotFound)
		_, err = tx.FindInvitation(ctx, u.ID, id(), t0)
		require.ErrorIs(t, err, notify.ErrNotFound)
		// Expired: not found.
		_, err = tx.FindInvitation(ctx, u.ID, s.second.ID, t0.Add(time.Hour))
		require.ErrorIs(t, err, notify.ErrNotFound)
		return nil
	})
}

func testFindInvitationsOfUser(t *testing.T, db *store.DB) {
	s := invitationFixture(t, db)
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		all, err := tx.FindInvitationsOfUser(ctx, s.u.ID, t0)
		require.NoError(t, err)
		require.Len(t, all, 2)
		require.Equal(t, []string{s.first.ID, s.second.ID}, []string{all[0].ID, all[1].ID}, "oldest first")
		require.Empty(t, all[1].InvitedBy, "no inviter")
		require.Empty(t, all[1].InvitedByEmail)
		// Expired: not listed.
		later, err := tx.FindInvitationsOfUser(ctx, s.u.ID, t0.Add(time.Hour))
		require.NoError(t, err)
		require.Len(t, later, 1)
		require.Equal(t, s.first.ID, later[0].ID)
		none, err := tx.FindInvitationsOfUser(ctx, s.other.ID, t0)
		require.NoError(t, err)
		require.Empty(t, none)
		return nil
	})
}

// testPutInvitation: a second invitation to the same workspace replaces
// the first and keeps its id.
func testPutInvitation(t *testing.T, db *store.DB) {
	s := invitationFixture(t, db)
	renewed := &notify.Invitation{ID: id(), WorkspaceID: s.ws1, UserID: s.u.ID, Role: notify.RoleOwner,
		CreatedAt: t0.Add(time.Minute), ExpiresAt: t0.Add(8 * day)}
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		return tx.PutInvitation(ctx, renewed)
	})
	require.Equal(t, s.first.ID, renewed.ID, "PutInvitation answers the id it kept")
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.FindInvitation(ctx, s.u.ID, s.first.ID, t0.Add(7*day))
		require.NoError(t, err)
		require.Equal(t, notify.RoleOwner, got.Role)
		require.Equal(t, t0.Add(time.Minute), got.CreatedAt)
		require.Equal(t, t0.Add(8*day), got.ExpiresAt)
		require.Empty(t, got.InvitedBy)
		return nil
	})
}

// testDeleteInvitation: one invitation per workspace and user.
func testDeleteInvitation(t *testing.T, db *store.DB) {
	s := invitationFixture(t, db)
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.ErrorIs(t, tx.DeleteInvitation(ctx, s.ws1, s.other.ID), notify.ErrNotFound)
		require.NoError(t, tx.DeleteInvitation(ctx, s.ws1, s.u.ID))
		require.ErrorIs(t, tx.DeleteInvitation(ctx, s.ws1, s.u.ID), notify.ErrNotFound)
		return nil
	})
}

// testDeleteInvitationByID: by the invitation's id, within its workspace.
func testDeleteInvitationByID(t *testing.T, db *store.DB) {
	s := invitationFixture(t, db)
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.ErrorIs(t, tx.DeleteInvitationByID(ctx, s.ws2, s.first.ID), notify.ErrNotFound, "another workspace's")
		require.ErrorIs(t, tx.DeleteInvitationByID(ctx, s.ws1, s.u.ID), notify.ErrNotFound, "a user id is not an invitation id")
		require.NoError(t, tx.DeleteInvitationByID(ctx, s.ws1, s.first.ID))
		require.ErrorIs(t, tx.DeleteInvitationByID(ctx, s.ws1, s.first.ID), notify.ErrNotFound)
		all, err := tx.FindInvitationsOfUser(ctx, s.u.ID, t0)
		require.NoError(t, err)
		require.Equal(t, []string{s.second.ID}, []string{all[0].ID})
		return nil
	})
}

// testDeleteExpiredInvitations: only expired ones go; what is left is
// deleted one by one.
func testDeleteExpiredInvitations(t *testing.T, db *store.DB) {
	s := invitationFixture(t, db)
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		n, err := tx.DeleteExpiredInvitations(ctx, t0.Add(time.Hour))
		require.NoError(t, err)
		require.Equal(t, 1, n, "only the ws2 invitation had expired")
		require.ErrorIs(t, tx.DeleteInvitation(ctx, s.ws2, s.u.ID), notify.ErrNotFound)
		require.NoError(t, tx.DeleteInvitation(ctx, s.ws1, s.u.ID))
		all, err := tx.FindInvitationsOfUser(ctx, s.u.ID, t0)
		require.NoError(t, err)
		require.Empty(t, all)
		return nil
	})
}
