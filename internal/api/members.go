package api

import (
	"net/http"

	"github.com/notifyd/notifyd/internal/notify"
)

// memberRoutes are the routes of invitations and leaving a workspace
// (issue 17): adding an existing user invites them, and only the user's
// own session accepts or declines.
func (a *API) memberRoutes() []Route {
	return []Route{
		{Method: "GET", Path: "/v1/auth/invitations", auth: authSession, h: a.handleInvitationList},
		{Method: "POST", Path: "/v1/auth/invitations/{id}/accept", auth: authSession, h: a.handleInvitationAccept},
		{Method: "POST", Path: "/v1/auth/invitations/{id}/decline", auth: authSession, h: a.handleInvitationDecline},
		{Method: "POST", Path: "/v1/workspace/leave", auth: authDashboard, Roles: notify.RolesAll, h: a.handleWorkspaceLeave},
	}
}

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

func (a *API) handleInvitationList(c *call) error {
	invs, err := a.svc.ListInvitations(c.ctx, c.actor)
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

func (a *API) handleInvitationAccept(c *call) error {
	if err := decodeNone(c.body); err != nil {
		return err
	}
	w, err := a.svc.AcceptInvitation(c.ctx, c.actor, c.r.PathValue("id"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, map[string]any{"workspace": w})
}

func (a *API) handleInvitationDecline(c *call) error {
	if err := decodeNone(c.body); err != nil {
		return err
	}
	if err := a.svc.DeclineInvitation(c.ctx, c.actor, c.r.PathValue("id")); err != nil {
		return err
	}
	return c.noContent()
}

func (a *API) handleWorkspaceLeave(c *call) error {
	if err := decodeNone(c.body); err != nil {
		return err
	}
	if err := a.svc.LeaveWorkspace(c.ctx, c.actor); err != nil {
		return err
	}
	return c.noContent()
}
