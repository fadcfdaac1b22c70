package sqlstore

import (
	"context"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
)

// PutInvitation creates or replaces the user's invitation to the
// workspace; a replaced invitation keeps its id.
func (t accountTx) PutInvitation(ctx context.Context, inv *notify.Invitation) error {
	var by *string
	if inv.InvitedBy != "" {
		by = &inv.InvitedBy
	}
	return t.c.QueryRow(ctx, `INSERT INTO invitations (id, workspace_id, user_id, role, invited_by, created_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (workspace_id, user_id) DO UPDATE SET role = excluded.role, invited_by = excluded.invited_by,
			created_at = excluded.created_at, expires_at = excluded.expires_at
		RETURNING id`,
		inv.ID, inv.WorkspaceID, inv.UserID, string(inv.Role), by, ms(inv.CreatedAt), ms(inv.ExpiresAt)).Scan(&inv.ID)
}

const invitationSelect = `SELECT i.id, i.workspace_id, w.name, i.user_id, u.email, i.role, i.invited_by, b.email, i.created_at, i.expires_at
	FROM invitations i JOIN users u ON u.id = i.user_id JOIN workspaces w ON w.id = i.workspace_id
	LEFT JOIN users b ON b.id = i.invited_by`

func scanInvitation(r Row) (*notify.Invitation, error) {
	var inv notify.Invitation
	var role string
	var by, byEmail *string
	var c, e int64
	if err := r.Scan(&inv.ID, &inv.WorkspaceID, &inv.WorkspaceName, &inv.UserID, &inv.Email, &role, &by, &byEmail, &c, &e); err != nil {
		return nil, err
	}
	if by != nil && byEmail != nil {
		inv.InvitedBy, inv.InvitedByEmail = *by, *byEmail
	}
	inv.Role, inv.CreatedAt, inv.ExpiresAt = notify.Role(role), fromMs(c), fromMs(e)
	return &inv, nil
}

func (t accountTx) FindInvitation(ctx context.Context, userID, id string, now time.Time) (*notify.Invitation, error) {
	return scanInvitation(t.c.QueryRow(ctx, invitationSelect+` WHERE i.user_id = ? AND i.id = ? AND i.expires_at > ?`, userID, id, ms(now)))
}

func (t accountTx) FindInvitationsOfUser(ctx context.Context, userID string, now time.Time) ([]*notify.Invitation, error) {
	return queryAll(ctx, t.c, scanInvitation, invitationSelect+` WHERE i.user_id = ? AND i.expires_at > ? ORDER BY i.created_at, i.id`, userID, ms(now))
}

func (t accountTx) DeleteInvitation(ctx context.Context, workspaceID, userID string) error {
	return expectOne(t.c.Exec(ctx, `DELETE FROM invitations WHERE workspace_id = ? AND user_id = ?`, workspaceID, userID))
}

func (t accountTx) DeleteInvitationByID(ctx context.Context, workspaceID, id string) error {
	return expectOne(t.c.Exec(ctx, `DELETE FROM invitations WHERE workspace_id = ? AND id = ?`, workspaceID, id))
}

func (t accountTx) DeleteExpiredInvitations(ctx context.Context, now time.Time) (int, error) {
	n, err := t.c.Exec(ctx, `DELETE FROM invitations WHERE expires_at <= ?`, ms(now))
	return int(n), err
}
