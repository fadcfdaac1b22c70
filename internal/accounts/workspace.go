package accounts

import (
	"context"
	"errors"
	"strings"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/secret"
	"github.com/notifyd/notifyd/internal/usecase"
)

// GetWorkspace returns the actor's workspace.
func (s *Service) GetWorkspace(ctx context.Context, a *usecase.Actor) (*notify.Workspace, error) {
	var w *notify.Workspace
	err := s.Store.View(ctx, func(tx notify.Tx) (err error) {
		w, err = tx.FindWorkspace(ctx, a.WorkspaceID)
		return usecase.NotFound(err, "Workspace")
	})
	return w, err
}

// UpdateWorkspace renames the workspace (audit workspace.updated).
func (s *Service) UpdateWorkspace(ctx context.Context, a *usecase.Actor, name string) (*notify.Workspace, error) {
	name = strings.TrimSpace(name)
	if name == "" || len([]rune(name)) > 120 || !usecase.Storable(name) {
		return nil, notify.Invalid("name must be 1 to 120 characters of text")
	}
	var w *notify.Workspace
	err := s.Store.Update(ctx, func(tx notify.Tx) error {
		if err := tx.UpdateWorkspaceName(ctx, a.WorkspaceID, name, s.Now()); err != nil {
			return usecase.NotFound(err, "Workspace")
		}
		if err := s.Audit(ctx, tx, a, a.WorkspaceID, "workspace.updated", "workspace", a.WorkspaceID, map[string]any{"name": name}); err != nil {
			return err
		}
		var err error
		w, err = tx.FindWorkspace(ctx, a.WorkspaceID)
		return err
	})
	return w, err
}

// ListMembers lists the workspace's members.
func (s *Service) ListMembers(ctx context.Context, a *usecase.Actor) ([]*notify.Member, error) {
	var out []*notify.Member
	err := s.Store.View(ctx, func(tx notify.Tx) (err error) {
		out, err = tx.FindMembers(ctx, a.WorkspaceID)
		return err
	})
	return out, err
}

// AddMemberResult is the member an add made or offered. Invited is true
// when the email belonged to an existing user: Member is then the role
// offered, pending the user's consent, and its UserID the invitation's id
// (the handle the workspace takes it back with), never the account's.
type AddMemberResult struct {
	Member  *notify.Member
	Invited bool
}

// AddMember adds a new user (created with the email) with a role, or
// invites an existing user, who becomes a member only by accepting. The
// answer has the same fields either way, and never carries a password or
// another workspace's user id, so it does not tell an admin of one tenant
// which addresses have accounts (see DECISIONS "Member answers"). A new
// user added without a password has none and cannot log in until an
// admin of the workspace sets its first one (SetMemberPassword). Only an
// owner grants owner.
func (s *Service) AddMember(ctx context.Context, a *usecase.Actor, email string, role notify.Role, password string) (*AddMemberResult, error) {
	email, err := NormalizeEmail(email)
	if err != nil {
		return nil, err
	}
	if !role.Valid() {
		return nil, notify.Invalid("role must be one of owner, admin, operator, viewer")
	}
	if role == notify.RoleOwner && a.Role != notify.RoleOwner {
		return nil, notify.Forbidden("Only an owner can grant the owner role")
	}
	res := &AddMemberResult{}
	var hash string
	if password != "" {
		if err := CheckPasswordRule("password", password); err != nil {
			return nil, err
		}
		if hash, err = secret.HashPassword(password); err != nil {
			return nil, err
		}
	}
	now := s.Now()
	err = s.Store.Update(ctx, func(tx notify.Tx) error {
		u, err := tx.FindUserByEmail(ctx, email)
		existing := err == nil
		if errors.Is(err, notify.ErrNotFound) {
			u = &notify.User{ID: usecase.NewID(), Email: email, PasswordHash: hash, CreatedAt: now}
			if err := tx.CreateUser(ctx, u); err != nil {
				return err
			}
		} else if err != nil {
			return err
		}
		if _, err := tx.FindMember(ctx, a.WorkspaceID, u.ID); err == nil {
			return notify.Conflict("This user is already a member of the workspace")
		}
		if existing {
			res.Invited = true
			res.Member, err = s.invite(ctx, tx, a, u, role)
			return err
		}
		if err := tx.PutMember(ctx, &notify.Member{WorkspaceID: a.WorkspaceID, UserID: u.ID, Role: role, CreatedAt: now}); err != nil {
			return err
		}
		if err := s.Audit(ctx, tx, a, a.WorkspaceID, "member.add", "member", u.ID, map[string]any{"email": email, "role": string(role)}); err != nil {
			return err
		}
		res.Member, err = tx.FindMember(ctx, a.WorkspaceID, u.ID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// SetMemberPassword sets the first password of a member added without
// one (audit member.password). An account that has a password is its
// owner's: 409, and only they change it.
func (s *Service) SetMemberPassword(ctx context.Context, a *usecase.Actor, userID, password string) (*notify.Member, error) {
	if err := CheckPasswordRule("password", password); err != nil {
		return nil, err
	}
	if !usecase.Storable(userID) {
		return nil, notify.NotFound("Member")
	}
	hash, err := secret.HashPassword(password)
	if err != nil {
		return nil, err
	}
	var out *notify.Member
	err = s.Store.Update(ctx, func(tx notify.Tx) error {
		m, err := tx.FindMember(ctx, a.WorkspaceID, userID)
		if err != nil {
			return usecase.NotFound(err, "Member")
		}
		if m.Role == notify.RoleOwner && a.Role != notify.RoleOwner {
			return notify.Forbidden("Only an owner can set an owner's password")
		}
		u, err := tx.FindUser(ctx, userID)
		if err != nil {
			return err
		}
		if u.PasswordHash != "" {
			return notify.Conflict("This member has a password already; only they can change it")
		}
		if err := tx.SetUserPassword(ctx, userID, hash); err != nil {
			return err
		}
		out = m
		return s.Audit(ctx, tx, a, a.WorkspaceID, "member.password", "member", userID, nil)
	})
	return out, err
}

// UpdateMemberRole changes a member's role, keeping at least one owner.
func (s *Service) UpdateMemberRole(ctx context.Context, a *usecase.Actor, userID string, role notify.Role) (*notify.Member, error) {
	if !role.Valid() {
		return nil, notify.Invalid("role must be one of owner, admin, operator, viewer")
	}
	if !usecase.Storable(userID) {
		return nil, notify.NotFound("Member")
	}
	var out *notify.Member
	err := s.Store.Update(ctx, func(tx notify.Tx) error {
		if err := tx.LockWorkspace(ctx, a.WorkspaceID); err != nil {
			return err
		}
		m, err := tx.FindMember(ctx, a.WorkspaceID, userID)
		if err != nil {
			return usecase.NotFound(err, "Member")
		}
		if (role == notify.RoleOwner || m.Role == notify.RoleOwner) && a.Role != notify.RoleOwner {
			return notify.Forbidden("Only an owner can grant or remove the owner role")
		}
		if m.Role == notify.RoleOwner && role != notify.RoleOwner {
			if err := lastOwnerCheck(ctx, tx, a.WorkspaceID); err != nil {
				return err
			}
		}
		m.Role = role
		if err := tx.PutMember(ctx, m); err != nil {
			return err
		}
		if err := s.Audit(ctx, tx, a, a.WorkspaceID, "member.update", "member", userID, map[string]any{"role": string(role)}); err != nil {
			return err
		}
		out, err = tx.FindMember(ctx, a.WorkspaceID, userID)
		return err
	})
	return out, err
}

// RemoveMember removes a member, or takes back a pending invitation of
// that user; the last owner cannot be removed.
func (s *Service) RemoveMember(ctx context.Context, a *usecase.Actor, userID string) error {
	if !usecase.Storable(userID) {
		return notify.NotFound("Member")
	}
	return s.Store.Update(ctx, func(tx notify.Tx) error {
		if err := tx.LockWorkspace(ctx, a.WorkspaceID); err != nil {
			return err
		}
		m, err := tx.FindMember(ctx, a.WorkspaceID, userID)
		if errors.Is(err, notify.ErrNotFound) {
			return s.revokeInvitation(ctx, tx, a, userID)
		}
		if err != nil {
			return err
		}
		if m.Role == notify.RoleOwner {
			if a.Role != notify.RoleOwner {
				return notify.Forbidden("Only an owner can grant or remove the owner role")
			}
			if err := lastOwnerCheck(ctx, tx, a.WorkspaceID); err != nil {
				return err
			}
		}
		if err := tx.DeleteMember(ctx, a.WorkspaceID, userID); err != nil {
			return err
		}
		return s.Audit(ctx, tx, a, a.WorkspaceID, "member.remove", "member", userID, nil)
	})
}

func lastOwnerCheck(ctx context.Context, tx notify.Tx, ws string) error {
	n, err := tx.CountOwners(ctx, ws)
	if err != nil {
		return err
	}
	if n <= 1 {
		return notify.Conflict("The last owner of a workspace cannot be removed")
	}
	return nil
}

// AuditPage is one page of the audit log.
type AuditPage struct {
	Logs    []*notify.AuditEntry
	Cursor  *notify.Cursor
	HasNext bool
}

// ListAudit pages the audit log newest first.
func (s *Service) ListAudit(ctx context.Context, a *usecase.Actor, f notify.AuditFilter) (*AuditPage, error) {
	if f.Limit == 0 {
		f.Limit = 100
	}
	if f.Limit < 1 || f.Limit > 200 {
		return nil, notify.Invalid("limit must be between 1 and 200")
	}
	for _, v := range []struct{ name, value string }{{"action", f.Action}, {"targetType", f.TargetType}} {
		if err := usecase.MaxLen(v.name, v.value, 100); err != nil {
			return nil, err
		}
		if err := usecase.ValidText(v.name, v.value); err != nil {
			return nil, err
		}
	}
	want := f.Limit
	f.Limit++ // one more tells whether a next page exists
	var rows []*notify.AuditEntry
	err := s.Store.View(ctx, func(tx notify.Tx) (err error) {
		rows, err = tx.FindAudit(ctx, a.WorkspaceID, f)
		return err
	})
	if err != nil {
		return nil, err
	}
	p := &AuditPage{}
	p.Logs, p.Cursor, p.HasNext = usecase.Trim(rows, want, func(e *notify.AuditEntry) notify.Cursor {
		return notify.Cursor{At: e.CreatedAt, ID: e.ID}
	})
	if p.Logs == nil {
		p.Logs = []*notify.AuditEntry{}
	}
	return p, nil
}

// Cleanup deletes expired sessions, nonces and invitations (the periodic
// cleanup job).
func (s *Service) Cleanup(ctx context.Context) (sessions, nonces int, err error) {
	now := s.Now()
	err = s.Store.Update(ctx, func(tx notify.Tx) error {
		if sessions, err = tx.DeleteExpiredSessions(ctx, now); err != nil {
			return err
		}
		if nonces, err = tx.DeleteExpiredNonces(ctx, now); err != nil {
			return err
		}
		_, err = tx.DeleteExpiredInvitations(ctx, now)
		return err
	})
	return sessions, nonces, err
}
