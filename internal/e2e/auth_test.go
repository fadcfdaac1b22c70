package e2e_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/secret"
)

type meBody struct {
	User struct {
		ID    string `json:"id"`
		Email string `json:"email"`
	} `json:"user"`
	Workspaces []struct {
		ID   string `json:"id"`
		Name string `json:"name"`
		Role string `json:"role"`
	} `json:"workspaces"`
}

func TestLogin(t *testing.T) {
	t.Parallel()
	e := start(t)

	// Right password, one membership: the workspace is selected.
	c, lb := e.login(t, e.Email, e.Password, "")
	require.Equal(t, "Bearer", lb.TokenType)
	require.Equal(t, e.Email, lb.User.Email)
	require.NotNil(t, lb.Workspace)
	require.Equal(t, e.Workspace, lb.Workspace.ID)
	require.Equal(t, "Test", lb.Workspace.Name)
	require.Equal(t, "owner", lb.Workspace.Role)
	exp, err := time.Parse("2006-01-02T15:04:05.000Z", lb.ExpiresAt)
	require.NoError(t, err)
	require.WithinDuration(t, time.Now().Add(12*time.Hour), exp, time.Minute)
	requireStatus(t, do(t, c, "GET", "/v1/workspace", nil), http.StatusOK)

	// The email is case-insensitive and trimmed.
	_, lb2 := e.login(t, "  OWNER@Example.com ", e.Password, "")
	require.Equal(t, lb.User.ID, lb2.User.ID)
	require.NotEqual(t, lb.AccessToken, lb2.AccessToken)

	// Wrong password and unknown email answer the same 401.
	wrong := e.callProblem(t, e.anon(), "POST", "/v1/auth/login", map[string]string{"email": e.Email, "password": "nope"}, 401, "SVC-40100")
	unknown := e.callProblem(t, e.anon(), "POST", "/v1/auth/login", map[string]string{"email": "nobody@example.com", "password": "nope"}, 401, "SVC-40100")
	require.Equal(t, wrong.Detail, unknown.Detail)
	require.Equal(t, wrong.Title, unknown.Title)

	// Missing fields are a validation error.
	e.callProblem(t, e.anon(), "POST", "/v1/auth/login", map[string]string{"email": e.Email}, 400, "SVC-40000")
	e.callProblem(t, e.anon(), "POST", "/v1/auth/login", map[string]string{"password": "x"}, 400, "SVC-40000")

	// /v1/me.
	r := do(t, c, "GET", "/v1/me", nil)
	requireStatus(t, r, http.StatusOK)
	me := decode[meBody](t, r)
	require.Equal(t, lb.User.ID, me.User.ID)
	require.Equal(t, e.Email, me.User.Email)
	require.Len(t, me.Workspaces, 1)
	require.Equal(t, e.Workspace, me.Workspaces[0].ID)
	require.Equal(t, "Test", me.Workspaces[0].Name)
	require.Equal(t, "owner", me.Workspaces[0].Role)

	// Logout: 204, and the token fails at once; other sessions live on.
	r = do(t, c, "POST", "/v1/auth/logout", nil)
	requireStatus(t, r, http.StatusNoContent)
	require.Empty(t, r.Body)
	e.callProblem(t, c, "GET", "/v1/me", nil, 401, "SVC-40100")
	e.callProblem(t, c, "GET", "/v1/workspace", nil, 401, "SVC-40100")
	e.callProblem(t, c, "POST", "/v1/auth/logout", nil, 401, "SVC-40100")
	requireStatus(t, do(t, e.withToken(lb2.AccessToken), "GET", "/v1/me", nil), http.StatusOK)
}

func TestLoginSeveralWorkspaces(t *testing.T) {
	t.Parallel()
	e := start(t)
	other, otherWS := e.NewWorkspace(t, "Other", "other-owner@example.com")
	recordClient(other)
	// The first owner becomes a viewer of the second workspace by
	// accepting its invitation.
	r := do(t, other, "POST", "/v1/workspace/members", map[string]string{"email": e.Email, "role": "viewer"})
	requireStatus(t, r, http.StatusCreated)
	_, hasPassword := decode[map[string]any](t, r)["password"]
	require.False(t, hasPassword, "an existing user gets no generated password")
	invs := invitations(t, e.Owner)
	require.Len(t, invs, 1)
	requireStatus(t, do(t, e.Owner, "POST", "/v1/auth/invitations/"+invs[0].ID+"/accept", nil), http.StatusOK)

	// Without workspaceId nothing is selected: workspace routes answer 403.
	c, lb := e.login(t, e.Email, e.Password, "")
	require.Nil(t, lb.Workspace)
	for _, rt := range []struct{ method, path string }{
		{"GET", "/v1/workspace"}, {"GET", "/v1/workspace/members"}, {"GET", "/v1/api-keys"},
		{"GET", "/v1/audit-logs"}, {"GET", "/v1/providers"}, {"GET", "/v1/routes"},
	} {
		e.callProblem(t, c, rt.method, rt.path, nil, 403, "SVC-40300")
	}
	// Session routes still work.
	me := decode[meBody](t, do(t, c, "GET", "/v1/me", nil))
	require.Len(t, me.Workspaces, 2)
	roles := map[string]string{}
	for _, w := range me.Workspaces {
		roles[w.ID] = w.Role
	}
	require.Equal(t, map[string]string{e.Workspace: "owner", otherWS: "viewer"}, roles)

	// select-workspace answers a new token; the old one ends at once.
	r = do(t, c, "POST", "/v1/auth/select-workspace", map[string]string{"workspaceId": otherWS})
	requireStatus(t, r, http.StatusOK)
	sel := decode[loginBody](t, r)
	require.Equal(t, "Bearer", sel.TokenType)
	require.NotNil(t, sel.Workspace)
	require.Equal(t, otherWS, sel.Workspace.ID)
	require.Equal(t, "viewer", sel.Workspace.Role)
	require.Equal(t, "Other", sel.Workspace.Name)
	e.callProblem(t, c, "GET", "/v1/me", nil, 401, "SVC-40100")
	viewer := e.withToken(sel.AccessToken)
	requireStatus(t, do(t, viewer, "GET", "/v1/providers", nil), http.StatusOK)
	e.callProblem(t, viewer, "GET", "/v1/workspace", nil, 403, "SVC-40300") // owner, admin only

	// select-workspace: missing id 400, not a member 403 (the session stays).
	e.callProblem(t, viewer, "POST", "/v1/auth/select-workspace", map[string]string{}, 400, "SVC-40000")
	e.callProblem(t, viewer, "POST", "/v1/auth/select-workspace", map[string]string{"workspaceId": "00000000-0000-7000-8000-000000000000"}, 403, "SVC-40300")
	requireStatus(t, do(t, viewer, "GET", "/v1/me", nil), http.StatusOK)

	// workspaceId picks among several at login.
	_, lb = e.login(t, e.Email, e.Password, e.Workspace)
	require.Equal(t, e.Workspace, lb.Workspace.ID)
	require.Equal(t, "owner", lb.Workspace.Role)
	_, lb = e.login(t, e.Email, e.Password, otherWS)
	require.Equal(t, otherWS, lb.Workspace.ID)
	require.Equal(t, "viewer", lb.Workspace.Role)
	// A workspace the user is not a member of.
	e.callProblem(t, e.anon(), "POST", "/v1/auth/login",
		map[string]string{"email": "other-owner@example.com", "password": "correct horse battery", "workspaceId": e.Workspace}, 403, "SVC-40300")
}

func TestLoginThrottle(t *testing.T) {
	t.Parallel()
	e, clk := startFrozen(t)
	for range 10 {
		e.callProblem(t, e.anon(), "POST", "/v1/auth/login", map[string]string{"email": e.Email, "password": "wrong"}, 401, "SVC-40100")
	}
	// The 11th attempt waits a second, even with the right password: a
	// delay, not a lock (an attempt made sooner does not move it).
	p := e.callProblem(t, e.anon(), "POST", "/v1/auth/login", map[string]string{"email": e.Email, "password": e.Password}, 429, "SVC-42900")
	require.NotContains(t, p.Detail, e.Email)
	e.callProblem(t, e.anon(), "POST", "/v1/auth/login", map[string]string{"email": "OWNER@example.com", "password": e.Password}, 429, "SVC-42900")
	requireThrottled(t, e.loginFrom(t, e.Email, e.Password, ""), 1)
	clk.advance(time.Second)
	e.login(t, e.Email, e.Password, "")
	// Other emails are not affected; existing sessions neither.
	_, otherWS := e.NewWorkspace(t, "Other", "other@example.com")
	_, lb := e.login(t, "other@example.com", "correct horse battery", "")
	require.Equal(t, otherWS, lb.Workspace.ID)
	requireStatus(t, do(t, e.Owner, "GET", "/v1/me", nil), http.StatusOK)

	// Unknown emails are throttled the same way (nothing tells they do not exist).
	for range 10 {
		e.callProblem(t, e.anon(), "POST", "/v1/auth/login", map[string]string{"email": "ghost@example.com", "password": "x"}, 401, "SVC-40100")
	}
	e.callProblem(t, e.anon(), "POST", "/v1/auth/login", map[string]string{"email": "ghost@example.com", "password": "x"}, 429, "SVC-42900")
}

func TestTokenFailures(t *testing.T) {
	t.Parallel()
	e := start(t)
	ctx := context.Background()

	// An expired session, written straight into the store.
	var userID string
	require.NoError(t, e.Daemon.DB.View(ctx, func(tx notify.Tx) error {
		u, err := tx.FindUserByEmail(ctx, e.Email)
		userID = u.ID
		return err
	}))
	expired := "nds_" + secret.RandomToken(32)
	now := time.Now().UTC()
	require.NoError(t, e.Daemon.DB.Update(ctx, func(tx notify.Tx) error {
		return tx.CreateSession(ctx, &notify.Session{TokenHash: secret.HashToken(expired), UserID: userID, WorkspaceID: e.Workspace,
			ExpiresAt: now.Add(-time.Second), CreatedAt: now.Add(-13 * time.Hour)})
	}))

	for _, path := range []string{"/v1/me", "/v1/workspace", "/v1/providers", "/v1/api-keys", "/v1/audit-logs", "/v1/routes"} {
		// Missing.
		e.callProblem(t, e.anon(), "GET", path, nil, 401, "SVC-40100")
		// Forged.
		e.callProblem(t, e.withToken("nds_"+secret.RandomToken(32)), "GET", path, nil, 401, "SVC-40100")
		e.callProblem(t, e.withToken(e.Owner.Token+"x"), "GET", path, nil, 401, "SVC-40100")
		// Expired.
		e.callProblem(t, e.withToken(expired), "GET", path, nil, 401, "SVC-40100")
	}
	// Malformed Authorization headers.
	for _, h := range []string{"Basic " + e.Owner.Token, "Bearer", "Bearer ", e.Owner.Token, "Token " + e.Owner.Token} {
		req, err := http.NewRequest("GET", e.Daemon.URL()+"/v1/me", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", h)
		resp, err := (&http.Client{Transport: transport}).Do(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		require.Equal(t, 401, resp.StatusCode, h)
	}
	// The scheme is case-insensitive.
	req, err := http.NewRequest("GET", e.Daemon.URL()+"/v1/me", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "bearer "+e.Owner.Token)
	resp, err := (&http.Client{Transport: transport}).Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
}

// TestRoles checks the role table of every route that exists.
func TestRoles(t *testing.T) {
	t.Parallel()
	e := start(t)
	_, viewer := e.member(t, "viewer")
	_, operator := e.member(t, "operator")
	_, admin := e.member(t, "admin")

	const id = "00000000-0000-7000-8000-000000000000"
	type rt struct {
		method, path string
		body         any
		minRole      string // weakest role allowed
	}
	routes := []rt{
		{"GET", "/v1/workspace", nil, "admin"},
		{"PATCH", "/v1/workspace", map[string]string{"name": "Test"}, "admin"},
		{"GET", "/v1/workspace/members", nil, "viewer"},
		{"POST", "/v1/workspace/members", map[string]string{"email": "x@example.com", "role": "bogus"}, "admin"},
		{"PATCH", "/v1/workspace/members/" + id, map[string]string{"role": "viewer"}, "admin"},
		{"DELETE", "/v1/workspace/members/" + id, nil, "admin"},
		{"POST", "/v1/auth/password", map[string]any{}, "viewer"},                     // 400: no passwords
		{"POST", "/v1/auth/logout-all", map[string]any{"unexpected": true}, "viewer"}, // 400: the sessions stay
		{"POST", "/v1/workspace/leave", map[string]any{"unexpected": true}, "viewer"},
		{"POST", "/v1/api-keys", map[string]any{"name": "", "scopes": []string{}}, "admin"},
		{"GET", "/v1/api-keys", nil, "viewer"},
		{"PATCH", "/v1/api-keys/" + id, map[string]any{"name": "x"}, "admin"},
		{"POST", "/v1/api-keys/" + id + "/rotate", nil, "admin"},
		{"POST", "/v1/api-keys/" + id + "/revoke", nil, "admin"},
		{"POST", "/v1/api-keys/" + id + "/suspend", nil, "admin"},
		{"POST", "/v1/api-keys/" + id + "/resume", nil, "admin"},
		{"GET", "/v1/audit-logs", nil, "viewer"},
		{"POST", "/v1/providers", map[string]any{"providerKind": "bogus", "displayName": "x"}, "operator"},
		{"GET", "/v1/providers", nil, "viewer"},
		{"GET", "/v1/providers/" + id, nil, "viewer"},
		{"PATCH", "/v1/providers/" + id, map[string]any{"displayName": "x"}, "operator"},
		{"GET", "/v1/routes", nil, "viewer"},
		{"PUT", "/v1/routes", map[string]any{"routes": []any{map[string]any{"channel": "bogus", "providerAccountId": id, "priority": 1}}}, "operator"},
		{"POST", "/v1/dead-letter/" + id + "/replay", nil, "operator"},                     // 404: no such item
		{"POST", "/v1/dead-letter/replay", map[string]any{"channel": "bogus"}, "operator"}, // 400: nothing replayed
		{"POST", "/v1/newsletter/campaigns/" + id + "/pause", nil, "operator"},             // 404: no such campaign
		{"POST", "/v1/newsletter/campaigns/" + id + "/resume", nil, "operator"},            // 404
		{"POST", "/v1/newsletter/campaigns/" + id + "/retry-failed", nil, "operator"},      // 404
		// Console reads (issue 18).
		{"GET", "/v1/requests", nil, "viewer"},
		{"GET", "/v1/requests/" + id, nil, "viewer"},                // 404
		{"POST", "/v1/requests/" + id + "/cancel", nil, "operator"}, // 404
		{"GET", "/v1/overview", nil, "viewer"},
		{"GET", "/v1/metrics?interval=day", nil, "viewer"}, // with the delivery rates (issue 35)
		// Template preview and layouts (issue 21).
		{"POST", "/v1/templates/" + id + "/preview", map[string]any{}, "viewer"},            // 404: no such template
		{"POST", "/v1/newsletter/campaigns/" + id + "/preview", map[string]any{}, "viewer"}, // 404: no such campaign
		{"GET", "/v1/layouts", nil, "viewer"},
		{"GET", "/v1/layouts/" + id, nil, "viewer"},                             // 404
		{"POST", "/v1/layouts", map[string]any{"name": "x"}, "operator"},        // 400: no html nor text
		{"PATCH", "/v1/layouts/" + id, map[string]any{"name": "x"}, "operator"}, // 404
		{"DELETE", "/v1/layouts/" + id, nil, "operator"},                        // 404
		// Sending identities (owner, admin): 404 for the unknown provider.
		{"GET", "/v1/providers/" + id + "/identities", nil, "admin"},
		{"POST", "/v1/providers/" + id + "/identities/email-addresses", map[string]any{"address": "a@example.com"}, "admin"},
		{"POST", "/v1/providers/" + id + "/identities/domains", map[string]any{"domain": "example.com"}, "admin"},
		{"POST", "/v1/providers/" + id + "/identities/domains/adopt", map[string]any{"domain": "example.com"}, "admin"},
		{"GET", "/v1/providers/" + id + "/identities/" + id, nil, "admin"},
		{"GET", "/v1/providers/" + id + "/identities/" + id + "/dns", nil, "admin"},
		// Double opt-in (issue 21, item 5).
		{"GET", "/v1/newsletter/settings", nil, "viewer"},
		{"PATCH", "/v1/newsletter/settings", map[string]any{}, "admin"},                        // 400: nothing changes
		{"POST", "/v1/newsletter/subscribers/" + id + "/resend-confirmation", nil, "operator"}, // 404
		// OTP fraud guard (issue 21, item 6).
		{"GET", "/v1/limits/otp-fraud-guard", nil, "viewer"},
		{"PUT", "/v1/limits/otp-fraud-guard", map[string]any{"dailyBudget": 0}, "admin"}, // 400: nothing stored
		// Send windows, consents and explanations (issue 32).
		{"GET", "/v1/send-windows", nil, "viewer"},
		{"PUT", "/v1/send-windows/workspace", map[string]any{"hours": "bogus"}, "admin"},             // 400: nothing stored
		{"DELETE", "/v1/send-windows/workspace", nil, "admin"},                                       // 404: none set
		{"PUT", "/v1/send-windows/categories/nope", map[string]any{"hours": "09:00-18:00"}, "admin"}, // 404
		{"DELETE", "/v1/send-windows/categories/nope", nil, "admin"},                                 // 404
		{"GET", "/v1/recipients/nobody/consents", nil, "viewer"},                                     // 404
		{"PUT", "/v1/recipients/nobody/consents/night-advertising", nil, "operator"},                 // 404
		{"DELETE", "/v1/recipients/nobody/consents/night-advertising", nil, "operator"},              // 404
		{"GET", "/v1/requests/" + id + "/explanation", nil, "viewer"},                                // 404
		// Categories and preferences (issue 32, item 3): nothing is written.
		{"GET", "/v1/categories", nil, "viewer"},
		{"GET", "/v1/categories/nope", nil, "viewer"},                              // 404
		{"POST", "/v1/categories", map[string]any{"name": "x"}, "operator"},        // 400: no key
		{"PATCH", "/v1/categories/nope", map[string]any{"name": "x"}, "operator"},  // 404
		{"DELETE", "/v1/categories/nope", nil, "admin"},                            // 404
		{"GET", "/v1/recipients/nobody/preferences", nil, "viewer"},                // 404
		{"PUT", "/v1/recipients/nobody/preferences", map[string]any{}, "operator"}, // 404
		{"GET", "/v1/preferences/default", nil, "viewer"},
		{"PUT", "/v1/preferences/default", map[string]any{"channels": map[string]bool{"fax": true}}, "admin"}, // 400
		// The preference page's link (issue 32, item 4).
		{"POST", "/v1/recipients/nobody/preference-link", nil, "operator"}, // 404
		// Inbound hooks (issue 36, item 3): nothing is written.
		{"GET", "/v1/inbound-hooks", nil, "viewer"},
		{"GET", "/v1/inbound-hooks/" + id, nil, "viewer"},                          // 404
		{"POST", "/v1/inbound-hooks", map[string]any{"name": "x"}, "admin"},        // 400: no format
		{"PATCH", "/v1/inbound-hooks/" + id, map[string]any{"name": "x"}, "admin"}, // 404
		{"DELETE", "/v1/inbound-hooks/" + id, nil, "admin"},                        // 404
		{"POST", "/v1/inbound-hooks/" + id + "/rotate-token", nil, "admin"},        // 404
		// E-mail engagement (issue 35, items 4 and 5): nothing is written.
		{"GET", "/v1/tracking", nil, "viewer"},
		{"PUT", "/v1/tracking/workspace", map[string]any{"opens": true}, "admin"},         // 400: clicks missing
		{"PUT", "/v1/tracking/categories/nope", map[string]any{"opens": true}, "admin"},   // 404
		{"DELETE", "/v1/tracking/categories/nope", nil, "admin"},                          // 404
		{"PUT", "/v1/tracking/campaigns/" + id, map[string]any{"clicks": false}, "admin"}, // 404
		{"DELETE", "/v1/tracking/campaigns/" + id, nil, "admin"},                          // 404
		{"GET", "/v1/newsletter/campaigns/" + id + "/stats", nil, "viewer"},               // 404
	}
	rank := map[string]int{"viewer": 0, "operator": 1, "admin": 2, "owner": 3}
	clients := map[string]*client.Client{"viewer": viewer, "operator": operator, "admin": admin, "owner": e.Owner}
	for _, r := range routes {
		for role, c := range clients {
			resp := do(t, c, r.method, r.path, r.body)
			if rank[role] < rank[r.minRole] {
				p := e.requireProblem(t, resp, 403, "SVC-40300", r.path)
				require.Contains(t, p.Detail, role, "%s %s as %s", r.method, r.path, role)
				continue
			}
			require.NotContains(t, []int{401, 403}, resp.Status, "%s %s as %s: %s", r.method, r.path, role, resp.Body)
			require.Less(t, resp.Status, 500)
		}
	}
}
