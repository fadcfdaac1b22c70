package accounts

import (
	"context"
	"errors"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/usecase"
)

// invitationTTL is how long an invitation can be accepted.
const invitationTTL = 7 * 24 * time.Hour

// invite offers role in the actor's workspace to the existing user u, or
// renews the offer already made (audit member.invite). The member it
// returns is the offer, shaped like the membership that accepting makes.
func (s *Service) invite(ctx context.Context, tx notify.Tx, a *usecase.Actor, u *notify.User, role notify.Role) (*notify.Member, error) {
	now := s.Now()
	inv := &notify.Invitation{ID: usecase.NewID(), WorkspaceID: a.WorkspaceID, UserID: u.ID, Role: role, InvitedBy: a.UserID,
		CreatedAt: now, ExpiresAt: now.Add(invitationTTL)}
	if err := tx.PutInvitation(ctx, inv); err != nil {
		return nil, err
	}
	if err := s.Audit(ctx, tx, a, a.WorkspaceID, "member.invite", "member", inv.ID, map[string]any{"email": u.Email, "role": string(role)}); err != nil {
		return nil, err
	}
	// The offer's handle is the invitation's id (PutInvitation keeps the
	// first one when it renews): the account's id is not this workspace's
	// to know before the user accepts.
	return &notify.Member{WorkspaceID: a.WorkspaceID, UserID: inv.ID, Email: u.Email, Role: role, CreatedAt: now}, nil
}

// revokeInvitation takes back the pending invitation id (the handle the
// add answered) to the actor's workspace (audit member.invite.revoke);
// without one the member is not found.
func (s *Service) revokeInvitation(ctx context.Context, tx notify.Tx, a *usecase.Actor, id string) error {
	if err := tx.DeleteInvitationByID(ctx, a.WorkspaceID, id); err != nil {
		return usecase.NotFound(err, "Member")
	}
	return s.Audit(ctx, tx, a, a.WorkspaceID, "member.invite.revoke", "member", id, nil)
}

// ListInvitations lists the actor's pending invitations, oldest first.
// It needs a session, not a workspace: an invitation is to another one.
func (s *Service) ListInvitations(ctx context.Context, a *usecase.Actor) ([]*notify.Invitation, error) {
	var out []*notify.Invitation
	err := s.Store.View(ctx, func(tx notify.Tx) (err error) {
		out, err = tx.FindInvitationsOfUser(ctx, a.UserID, s.Now())
		return err
	})
	return out, err
}

// AcceptInvitation makes the actor a member of the inviting workspace with
// the offered role (audit member.invite.accept there). The session keeps
// its workspace; select-workspace switches.
func (s *Service) AcceptInvitation(ctx context.Context, a *usecase.Actor, id string) (*WorkspaceRole, error) {
	var out *WorkspaceRole
	err := s.Store.Update(ctx, func(tx notify.Tx) error {
		inv, err := s.takeInvitation(ctx, tx, a, id)
		if err != nil {
			return err
		}
		if _, err := tx.FindMember(ctx, inv.WorkspaceID, a.UserID); err == nil {
			return notify.Conflict("You are already a member of this workspace")
		} else if !errors.Is(err, notify.ErrNotFound) {
			return err
		}
		if err := tx.PutMember(ctx, &notify.Member{WorkspaceID: inv.WorkspaceID, UserID: a.UserID, Role: inv.Role, CreatedAt: s.Now()}); err != nil {
			return err
		}
		out = &WorkspaceRole{ID: inv.WorkspaceID, Name: inv.WorkspaceName, Role: inv.Role}
		return s.Audit(ctx, tx, a, inv.WorkspaceID, "member.invite.accept", "member", a.UserID, map[string]any{"role": string(inv.Role)})
	})
	return out, err
}

// DeclineInvitation drops the actor's invitation (audit
// member.invite.decline in the inviting workspace).
func (s *Service) DeclineInvitation(ctx context.Context, a *usecase.Actor, id string) error {
	return s.Store.Update(ctx, func(tx notify.Tx) error {
		inv, err := s.takeInvitation(ctx, tx, a, id)
		if err != nil {
			return err
		}
		return s.Audit(ctx, tx, a, inv.WorkspaceID, "member.invite.decline", "member", inv.ID, nil)
	})
}

// takeInvitation reads and deletes the actor's unexpired invitation id.
// The delete comes before any other write, so of two concurrent accepts
// one finds it gone (404).
func (s *Service) takeInvitation(ctx context.Context, tx notify.Tx, a *usecase.Actor, id string) (*notify.Invitation, error) {
	if !usecase.Storable(id) {
		return nil, notify.NotFound("Invitation")
	}
	inv, err := tx.FindInvitation(ctx, a.UserID, id, s.Now())
	if err != nil {
		return nil, usecase.NotFound(err, "Invitation")
	}
	if err := tx.DeleteInvitation(ctx, inv.WorkspaceID, a.UserID); err != nil {
		return nil, usecase.NotFound(err, "Invitation")
	}
	return inv, nil
}

// LeaveWorkspace ends the actor's own membership of the selected
// workspace (audit member.leave); the session stays, with no workspace.
// The last owner cannot leave.
func (s *Service) LeaveWorkspace(ctx context.Context, a *usecase.Actor) error {
	return s.Store.Update(ctx, func(tx notify.Tx) error {
		if err := tx.LockWorkspace(ctx, a.WorkspaceID); err != nil {
			return err
		}
		m, err := tx.FindMember(ctx, a.WorkspaceID, a.UserID)
		if err != nil {
			return usecase.NotFound(err, "Member")
		}
		if m.Role == notify.RoleOwner {
			n, err := tx.CountOwners(ctx, a.WorkspaceID)
			if err != nil {
				return err
			}
			if n <= 1 {
				return notify.Conflict("The last owner cannot leave the workspace; make another member owner first")
			}
		}
		if err := tx.DeleteMember(ctx, a.WorkspaceID, a.UserID); err != nil {
			return err
		}
		return s.Audit(ctx, tx, a, a.WorkspaceID, "member.leave", "member", a.UserID, map[string]any{"role": string(m.Role)})
	})
}
