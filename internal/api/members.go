package api

import (
	"net/http"

	"github.com/notifyd/notifyd/internal/notify"
)

type invitationJSON struct {
	ID        string           `json:"id"`
	Workspace invitationWSJSON `json:"workspace"`
	Role      notify.Role      `json:"role"`
	InvitedBy *userJSON        `json:"invitedBy"`
	CreatedAt string           `json:"createdAt"`
	ExpiresAt string           `json:"expiresAt"`
}

type invitationWSJSON struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

func (a accountsAPI) handleInvitationList(c *call) error {
	invs, err := a.room.ListInvitations(c.ctx, c.actor)
	if err != nil {
		return err
	}
	out := make([]invitationJSON, len(invs))
	for i, inv := range invs {
		out[i] = invitationJSON{ID: inv.ID, Workspace: invitationWSJSON{ID: inv.WorkspaceID, Name: inv.WorkspaceName},
			Role: inv.Role, CreatedAt: Timestamp(inv.CreatedAt), ExpiresAt: Timestamp(inv.ExpiresAt)}
		if inv.InvitedBy != "" {
			out[i].InvitedBy = &userJSON{ID: inv.InvitedBy, Email: inv.InvitedByEmail}
		}
	}
	return c.ok(http.StatusOK, map[string]any{"invitations": out})
}

func (a accountsAPI) handleInvitationAccept(c *call) error {
	if err := decodeNone(c.body); err != nil {
		return err
	}
	w, err := a.room.AcceptInvitation(c.ctx, c.actor, c.r.PathValue("id"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, map[string]any{"workspace": w})
}

func (a accountsAPI) handleInvitationDecline(c *call) error {
	if err := decodeNone(c.body); err != nil {
		return err
	}
	if err := a.room.DeclineInvitation(c.ctx, c.actor, c.r.PathValue("id")); err != nil {
		return err
	}
	return c.noContent()
}

func (a accountsAPI) handleWorkspaceLeave(c *call) error {
	if err := decodeNone(c.body); err != nil {
		return err
	}
	if err := a.room.LeaveWorkspace(c.ctx, c.actor); err != nil {
		return err
	}
	return c.noContent()
}
