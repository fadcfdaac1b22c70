package api

import (
	"net/http"
	"net/netip"
	"strings"

	"github.com/notifyd/notifyd/internal/accounts"
	"github.com/notifyd/notifyd/internal/notify"
)

// accountsAPI are the handlers of the accounts room: login and sessions,
// the workspace, members and invitations, API keys and the audit log.
type accountsAPI struct {
	*API
	room *accounts.Service
}

// routes are the accounts room's routes.
func (a accountsAPI) routes() []Route {
	all, admin := notify.RolesAll, notify.RolesAdmin
	return []Route{
		// Dashboard authentication (API-DECISIONS section 2).
		{Method: "POST", Path: "/v1/auth/login", auth: authPublic, h: a.handleLogin},
		{Method: "POST", Path: "/v1/auth/select-workspace", auth: authSession, h: a.handleSelectWorkspace},
		{Method: "POST", Path: "/v1/auth/logout", auth: authSession, h: a.handleLogout},
		{Method: "POST", Path: "/v1/auth/logout-all", auth: authSession, h: a.handleLogoutAll},
		{Method: "POST", Path: "/v1/auth/password", auth: authSession, h: a.handlePasswordChange},
		{Method: "GET", Path: "/v1/me", auth: authSession, h: a.handleMe},
		{Method: "GET", Path: "/v1/workspace", auth: authDashboard, Roles: admin, h: a.handleWorkspaceGet},
		{Method: "PATCH", Path: "/v1/workspace", auth: authDashboard, Roles: admin, h: a.handleWorkspaceUpdate},
		{Method: "GET", Path: "/v1/workspace/members", auth: authDashboard, Roles: all, h: a.handleMemberList},
		{Method: "POST", Path: "/v1/workspace/members", auth: authDashboard, Roles: admin, h: a.handleMemberCreate},
		{Method: "PATCH", Path: "/v1/workspace/members/{userId}", auth: authDashboard, Roles: admin, h: a.handleMemberUpdate},
		{Method: "DELETE", Path: "/v1/workspace/members/{userId}", auth: authDashboard, Roles: admin, h: a.handleMemberDelete},

		// Invitations and leaving a workspace (issue 17): adding an
		// existing user invites them, and only the user's own session
		// accepts or declines (members.go).
		{Method: "GET", Path: "/v1/auth/invitations", auth: authSession, h: a.handleInvitationList},
		{Method: "POST", Path: "/v1/auth/invitations/{id}/accept", auth: authSession, h: a.handleInvitationAccept},
		{Method: "POST", Path: "/v1/auth/invitations/{id}/decline", auth: authSession, h: a.handleInvitationDecline},
		{Method: "POST", Path: "/v1/workspace/leave", auth: authDashboard, Roles: all, h: a.handleWorkspaceLeave},

		// API keys (API-DECISIONS section 3; apikey.go).
		{Method: "POST", Path: "/v1/api-keys", auth: authDashboard, Roles: admin, h: a.handleAPIKeyCreate},
		{Method: "GET", Path: "/v1/api-keys", auth: authDashboard, Roles: all, h: a.handleAPIKeyList},
		{Method: "PATCH", Path: "/v1/api-keys/{id}", auth: authDashboard, Roles: admin, h: a.handleAPIKeyUpdate},
		{Method: "POST", Path: "/v1/api-keys/{id}/rotate", auth: authDashboard, Roles: admin, h: a.handleAPIKeyRotate},
		{Method: "POST", Path: "/v1/api-keys/{id}/revoke", auth: authDashboard, Roles: admin, h: a.handleAPIKeyStatus("revoke")},
		{Method: "POST", Path: "/v1/api-keys/{id}/suspend", auth: authDashboard, Roles: admin, h: a.handleAPIKeyStatus("suspend")},
		{Method: "POST", Path: "/v1/api-keys/{id}/resume", auth: authDashboard, Roles: admin, h: a.handleAPIKeyStatus("resume")},

		// Audit log.
		{Method: "GET", Path: "/v1/audit-logs", auth: authDashboard, Roles: all, h: a.handleAuditList},
	}
}

type userJSON struct {
	ID    string `json:"id"`
	Email string `json:"email"`
}

type loginJSON struct {
	AccessToken string                  `json:"accessToken"`
	TokenType   string                  `json:"tokenType"`
	ExpiresAt   string                  `json:"expiresAt"`
	User        userJSON                `json:"user"`
	Workspace   *accounts.WorkspaceRole `json:"workspace"`
}

func loginBody(res *accounts.LoginResult) loginJSON {
	return loginJSON{AccessToken: res.AccessToken, TokenType: "Bearer", ExpiresAt: Timestamp(res.ExpiresAt),
		User: userJSON{ID: res.User.ID, Email: res.User.Email}, Workspace: res.Workspace}
}

func (a accountsAPI) handleLogin(c *call) error {
	var in struct {
		Email       *string `json:"email"`
		Password    *string `json:"password"`
		WorkspaceID string  `json:"workspaceId"`
	}
	if err := c.decode(&in); err != nil {
		return err
	}
	if in.Email == nil || in.Password == nil {
		return notify.Invalid("email and password are required")
	}
	res, err := a.room.Login(c.ctx, *in.Email, *in.Password, in.WorkspaceID, a.ClientAddr(c.r))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, loginBody(res))
}

// TrustedProxies are the reverse proxies in front of the server. A request
// from one of them names its client in X-Forwarded-For: the client is the
// rightmost address there that is not itself a trusted proxy (each proxy
// appends the address it saw; entries further left are the client's word).
// Without trusted proxies the client is the connection's peer.
type TrustedProxies []netip.Prefix

func (p TrustedProxies) trusts(ip netip.Addr) bool {
	for _, pre := range p {
		if pre.Contains(ip) {
			return true
		}
	}
	return false
}

// ClientAddr is the address the login throttle counts a request under
// (the console's login form counts under the same).
func (a *API) ClientAddr(r *http.Request) string {
	peer, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	ip := peer.Addr().Unmap()
	if !a.proxies.trusts(ip) {
		return ip.String()
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		hop, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break // not an address: what is left of it is not to be trusted
		}
		ip = hop.Unmap()
		if !a.proxies.trusts(ip) {
			break
		}
	}
	return ip.String()
}

func (a accountsAPI) handleSelectWorkspace(c *call) error {
	var in struct {
		WorkspaceID string `json:"workspaceId"`
	}
	if err := c.decode(&in); err != nil {
		return err
	}
	res, err := a.room.SelectWorkspace(c.ctx, c.actor, in.WorkspaceID)
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, loginBody(res))
}

func (a accountsAPI) handleLogout(c *call) error {
	if err := decodeNone(c.body); err != nil {
		return err
	}
	if err := a.room.Logout(c.ctx, c.actor); err != nil {
		return err
	}
	return c.noContent()
}

func (a accountsAPI) handleLogoutAll(c *call) error {
	if err := decodeNone(c.body); err != nil {
		return err
	}
	if err := a.room.LogoutAll(c.ctx, c.actor); err != nil {
		return err
	}
	return c.noContent()
}

func (a accountsAPI) handlePasswordChange(c *call) error {
	var in struct {
		CurrentPassword *string `json:"currentPassword"`
		NewPassword     *string `json:"newPassword"`
	}
	if err := c.decode(&in); err != nil {
		return err
	}
	if in.CurrentPassword == nil || in.NewPassword == nil {
		return notify.Invalid("currentPassword and newPassword are required")
	}
	if err := a.room.ChangePassword(c.ctx, c.actor, *in.CurrentPassword, *in.NewPassword, a.ClientAddr(c.r)); err != nil {
		return err
	}
	return c.noContent()
}

func (a accountsAPI) handleMe(c *call) error {
	u, ws, err := a.room.Me(c.ctx, c.actor)
	if err != nil {
		return err
	}
	if ws == nil {
		ws = []accounts.WorkspaceRole{}
	}
	return c.ok(http.StatusOK, map[string]any{"user": userJSON{ID: u.ID, Email: u.Email}, "workspaces": ws})
}

type workspaceJSON struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	CreatedAt string `json:"createdAt"`
	UpdatedAt string `json:"updatedAt"`
}

func workspaceBody(w *notify.Workspace) map[string]any {
	return map[string]any{"workspace": workspaceJSON{ID: w.ID, Name: w.Name, CreatedAt: Timestamp(w.CreatedAt), UpdatedAt: Timestamp(w.UpdatedAt)}}
}

func (a accountsAPI) handleWorkspaceGet(c *call) error {
	w, err := a.room.GetWorkspace(c.ctx, c.actor)
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, workspaceBody(w))
}

func (a accountsAPI) handleWorkspaceUpdate(c *call) error {
	var in struct {
		Name *string `json:"name"`
	}
	if err := c.decode(&in); err != nil {
		return err
	}
	if in.Name == nil {
		return notify.Invalid("name is required")
	}
	w, err := a.room.UpdateWorkspace(c.ctx, c.actor, *in.Name)
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, workspaceBody(w))
}

type memberJSON struct {
	UserID    string      `json:"userId"`
	Email     string      `json:"email"`
	Role      notify.Role `json:"role"`
	CreatedAt string      `json:"createdAt"`
}

func memberBody(m *notify.Member) memberJSON {
	return memberJSON{UserID: m.UserID, Email: m.Email, Role: m.Role, CreatedAt: Timestamp(m.CreatedAt)}
}

func (a accountsAPI) handleMemberList(c *call) error {
	ms, err := a.room.ListMembers(c.ctx, c.actor)
	if err != nil {
		return err
	}
	out := make([]memberJSON, len(ms))
	for i, m := range ms {
		out[i] = memberBody(m)
	}
	return c.ok(http.StatusOK, map[string]any{"members": out})
}

func (a accountsAPI) handleMemberCreate(c *call) error {
	var in struct {
		Email    string `json:"email"`
		Role     string `json:"role"`
		Password string `json:"password"`
	}
	if err := c.decode(&in); err != nil {
		return err
	}
	res, err := a.room.AddMember(c.ctx, c.actor, in.Email, notify.Role(in.Role), in.Password)
	if err != nil {
		return err
	}
	// The same fields whether the address had an account (an invitation)
	// or not, and whatever the password: DECISIONS "Member answers".
	return c.ok(http.StatusCreated, map[string]any{"member": memberBody(res.Member)})
}

func (a accountsAPI) handleMemberUpdate(c *call) error {
	var in struct {
		Role     *string `json:"role"`
		Password *string `json:"password"`
	}
	if err := c.decode(&in); err != nil {
		return err
	}
	userID := c.r.PathValue("userId")
	var m *notify.Member
	var err error
	// password sets the first one of a member added without one;
	// without it, role is required as before.
	if in.Password == nil || in.Role != nil {
		role := ""
		if in.Role != nil {
			role = *in.Role
		}
		if m, err = a.room.UpdateMemberRole(c.ctx, c.actor, userID, notify.Role(role)); err != nil {
			return err
		}
	}
	if in.Password != nil {
		if m, err = a.room.SetMemberPassword(c.ctx, c.actor, userID, *in.Password); err != nil {
			return err
		}
	}
	return c.ok(http.StatusOK, map[string]any{"member": memberBody(m)})
}

func (a accountsAPI) handleMemberDelete(c *call) error {
	if err := a.room.RemoveMember(c.ctx, c.actor, c.r.PathValue("userId")); err != nil {
		return err
	}
	return c.noContent()
}

func (a accountsAPI) handleAuditList(c *call) error {
	q := c.r.URL.Query()
	f := notify.AuditFilter{Action: q.Get("action"), TargetType: q.Get("targetType")}
	var err error
	if f.Limit, err = intParam(q.Get("limit"), "limit"); err != nil {
		return err
	}
	if f.Before, err = decodeCursor(q.Get("cursor")); err != nil {
		return err
	}
	for _, v := range []struct{ name, value string }{{"action", f.Action}, {"targetType", f.TargetType}} {
		if err := checkLen(v.name, v.value, 100); err != nil {
			return err
		}
		if err := checkText(v.name, v.value); err != nil {
			return err
		}
	}
	page, err := a.room.ListAudit(c.ctx, c.actor, f)
	if err != nil {
		return err
	}
	logs := make([]map[string]any, len(page.Logs))
	for i, e := range page.Logs {
		payload := e.Payload
		if payload == nil {
			payload = map[string]any{}
		}
		logs[i] = map[string]any{"id": e.ID, "actorUserId": e.ActorUserID, "action": e.Action, "targetType": e.TargetType,
			"targetId": e.TargetID, "payload": payload, "createdAt": Timestamp(e.CreatedAt)}
	}
	return c.ok(http.StatusOK, map[string]any{"logs": logs, "cursor": encodeCursor(page.Cursor), "hasNext": page.HasNext})
}
