// Package console_test tests the web console (internal/web) against a
// running daemon: over HTTP with a cookie jar (this file) and in headless
// Chromium (browser_test.go).
package console_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/notifytest"
	"github.com/notifyd/notifyd/internal/web"
)

var ctx = context.Background()

// fixture is a daemon with an SMS route to the simulator and a sending key.
type fixture struct {
	env *notifytest.Env
	key *client.Client
}

func setup(t *testing.T) *fixture {
	t.Helper()
	env := notifytest.StartDaemon(t)
	env.SimRoute(t, "sms", "vendorb_sms", nil)
	key, _ := env.APIKey(t, "console", "notifications:send", "notifications:read")
	return &fixture{env: env, key: key}
}

// send sends one SMS (scheduled when at is set) and answers its request id.
func (f *fixture) send(t *testing.T, to, name, text string, at *time.Time) string {
	t.Helper()
	body := map[string]any{"channel": "sms", "recipient": map[string]any{"address": to, "name": name},
		"content": map[string]any{"text": text}}
	if at != nil {
		body["scheduledAt"] = at.UTC().Format(time.RFC3339)
	}
	r := notifytest.Signed(t, f.key, "POST", "/v1/notifications", body)
	require.Contains(t, []int{http.StatusAccepted, http.StatusCreated}, r.Status, string(r.Body))
	return notifytest.Data[notifytest.Accepted](t, r, r.Status).RequestID
}

// waitStatus polls the API until the request has status.
func (f *fixture) waitStatus(t *testing.T, id string, status notify.RequestStatus) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var got string
	for time.Now().Before(deadline) {
		r, err := f.env.Owner.Dashboard(ctx, "GET", "/v1/requests/"+id, nil)
		require.NoError(t, err)
		var out struct {
			Status string `json:"status"`
		}
		require.NoError(t, json.Unmarshal(r.Body, &out))
		if got = out.Status; got == string(status) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("request %s stayed %q, want %q", id, got, status)
}

func requireSecurityHeaders(t *testing.T, resp *http.Response) {
	t.Helper()
	csp := resp.Header.Get("Content-Security-Policy")
	require.Contains(t, csp, "script-src 'self'")
	require.Contains(t, csp, "frame-ancestors 'none'")
	require.NotContains(t, csp, "unsafe-inline")
	require.Equal(t, "nosniff", resp.Header.Get("X-Content-Type-Options"))
	require.Equal(t, "same-origin", resp.Header.Get("Referrer-Policy"))
}

// TestConsoleSession: login (CSRF-checked, same rules as the API), the
// session cookie's flags, security headers, logout ending the session
// server-side.
func TestConsoleSession(t *testing.T) {
	t.Parallel()
	e := notifytest.StartDaemon(t)
	c := e.NewConsole(t)

	resp, _ := c.Get(t, "/")
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Equal(t, "/login", resp.Header.Get("Location"))
	resp, body := c.Get(t, "/login")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	requireSecurityHeaders(t, resp)
	require.Contains(t, body, `<label for="email">`)
	require.NotEmpty(t, c.CSRF)

	form := func(csrf, password string) url.Values {
		return url.Values{"email": {e.Email}, "password": {password}, "csrf": {csrf}}
	}
	resp, _ = c.Post(t, "/login", form("", e.Password))
	require.Equal(t, http.StatusForbidden, resp.StatusCode, "no CSRF token")
	c.Get(t, "/login")
	resp, _ = c.Post(t, "/login", form("wrong", e.Password))
	require.Equal(t, http.StatusForbidden, resp.StatusCode, "wrong CSRF token")
	c.Get(t, "/login")
	resp, body = c.Post(t, "/login", form(c.CSRF, "not the password"))
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	require.Contains(t, body, "Invalid email or password")
	// The API's length rule holds for the form too.
	c.Get(t, "/login")
	resp, _ = c.Post(t, "/login", url.Values{"email": {strings.Repeat("a", 321)}, "password": {"x"}})
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)

	c.Get(t, "/login")
	resp, _ = c.Post(t, "/login", form(c.CSRF, e.Password))
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Equal(t, "/", resp.Header.Get("Location"))
	var session *http.Cookie
	for _, ck := range resp.Cookies() {
		if ck.Name == "notifyd_session" {
			session = ck
		}
	}
	require.NotNil(t, session)
	require.True(t, session.HttpOnly)
	require.Equal(t, http.SameSiteStrictMode, session.SameSite)
	require.False(t, session.Secure, "the test base URL is http")
	require.True(t, strings.HasPrefix(session.Value, "nds_"), "the cookie carries the dashboard token")

	// The cookie's token is a dashboard token: the API takes it as bearer.
	api := client.New(e.Daemon.URL())
	api.Token = session.Value
	r, err := api.Dashboard(ctx, "GET", "/v1/me", nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, r.Status)

	resp, body = c.Get(t, "/")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	requireSecurityHeaders(t, resp)
	for _, s := range web.Sections {
		require.Contains(t, body, `href="`+s.Path+`"`, s.Name)
	}
	// Every section, built or its "not built yet" page, answers the owner
	// inside the console (which sections are built changes as pages land).
	for _, s := range web.Sections {
		resp, body = c.Get(t, s.Path)
		require.Equal(t, http.StatusOK, resp.StatusCode, s.Path)
		require.Contains(t, body, `id="logout"`, s.Path)
	}

	// Logout needs the CSRF token, then ends the session on the server.
	resp, _ = c.Post(t, "/logout", url.Values{"csrf": {""}})
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	resp, _ = c.Post(t, "/logout", url.Values{"csrf": {"wrong"}})
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	resp, _ = c.Post(t, "/logout", nil)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	r, err = api.Dashboard(ctx, "GET", "/v1/me", nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusUnauthorized, r.Status, "the token is invalid after logout")
	resp, _ = c.Get(t, "/")
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
}

// TestConsoleWorkspaceSelection: a user of two workspaces picks one.
func TestConsoleWorkspaceSelection(t *testing.T) {
	t.Parallel()
	e := notifytest.StartDaemon(t)
	other, _ := e.NewWorkspace(t, "Second", "second@example.com")
	r, err := other.Dashboard(ctx, "POST", "/v1/workspace/members", map[string]string{"email": e.Email, "role": "viewer"})
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	// An existing user is invited; accepting makes the second membership.
	r, err = e.Owner.Dashboard(ctx, "GET", "/v1/auth/invitations", nil)
	require.NoError(t, err)
	var invs struct {
		Invitations []struct {
			ID string `json:"id"`
		} `json:"invitations"`
	}
	require.NoError(t, json.Unmarshal(r.Body, &invs))
	require.Len(t, invs.Invitations, 1, string(r.Body))
	r, err = e.Owner.Dashboard(ctx, "POST", "/v1/auth/invitations/"+invs.Invitations[0].ID+"/accept", nil)
	require.NoError(t, err)
	require.Less(t, r.Status, 300, string(r.Body))
	c := e.NewConsole(t)
	c.Get(t, "/login")
	resp, _ := c.Post(t, "/login", url.Values{"email": {e.Email}, "password": {e.Password}})
	require.Equal(t, "/workspaces", resp.Header.Get("Location"))
	resp, _ = c.Get(t, "/")
	require.Equal(t, "/workspaces", resp.Header.Get("Location"), "no workspace yet")
	resp, body := c.Get(t, "/workspaces")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, body, "Second")
	resp, _ = c.Post(t, "/workspaces", url.Values{"workspaceId": {e.Workspace}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	resp, body = c.Get(t, "/")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, body, `<span id="who-role">owner</span>`)
}

// TestConsoleMessages: a sent message is listed and filtered, its page
// shows the attempt with provider, classification, latency and raw
// exchange, and user values are escaped.
func TestConsoleMessages(t *testing.T) {
	t.Parallel()
	f := setup(t)
	const evil = `<script>alert(1)</script>`
	id := f.send(t, "010-1234-5678", evil, "hi "+evil, nil)
	f.waitStatus(t, id, notify.StatusSent)
	c := f.env.ConsoleLogin(t, f.env.Email, f.env.Password)

	resp, body := c.Get(t, "/messages")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, body, `data-request-id="`+id+`"`)
	require.NotContains(t, body, evil)
	require.Contains(t, body, "&lt;script&gt;alert(1)&lt;/script&gt;")
	_, body = c.Get(t, "/messages?status=sent&channel=sms&recipient=010-1234-5678")
	require.Contains(t, body, id)
	_, body = c.Get(t, "/messages?status=failed")
	require.NotContains(t, body, id)
	_, body = c.Get(t, "/messages?requestId="+id)
	require.Contains(t, body, id)
	resp, body = c.Get(t, "/messages?status=bogus")
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Contains(t, body, "status must be one of")

	resp, body = c.Get(t, "/messages/"+id)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.NotContains(t, body, evil)
	require.Contains(t, body, "hi &lt;script&gt;")
	require.Contains(t, body, `class="attempt-provider">vendorb_sms`)
	require.Contains(t, body, `class="attempt-class">success`)
	require.Contains(t, body, " ms</dd>")
	require.Contains(t, body, `class="raw-request"`)
	require.NotContains(t, body, `id="cancel"`, "a sent request has no cancel")

	resp, _ = c.Get(t, "/messages/00000000-0000-7000-8000-000000000000")
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	f.env.NewWorkspace(t, "Other", "other@example.com")
	oc := f.env.ConsoleLogin(t, "other@example.com", "correct horse battery")
	resp, _ = oc.Get(t, "/messages/"+id)
	require.Equal(t, http.StatusNotFound, resp.StatusCode, "another workspace's request is 404")

	resp, body = c.Get(t, "/")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, body, `<th scope="row">sms</th><td>1</td>`)
}

// TestConsoleCancelRoles: a viewer sees no cancel button and a forged
// cancel from the viewer's session (valid CSRF token) is refused by the
// role check; an operator cancels (audited); no or wrong CSRF is 403.
func TestConsoleCancelRoles(t *testing.T) {
	t.Parallel()
	f := setup(t)
	at := time.Now().Add(time.Hour)
	id := f.send(t, "010-1234-5678", "", "later", &at)
	viewer := f.env.ConsoleMember(t, "viewer")
	operator := f.env.ConsoleMember(t, "operator")

	_, body := viewer.Get(t, "/messages/"+id)
	require.Contains(t, body, `id="status" class="status-queued"`)
	require.NotContains(t, body, `id="cancel"`)
	resp, body := viewer.Post(t, "/messages/"+id+"/cancel", nil)
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	require.Contains(t, body, "Role viewer is not allowed")

	_, body = operator.Get(t, "/messages/"+id)
	require.Contains(t, body, `id="cancel"`)
	resp, _ = operator.Post(t, "/messages/"+id+"/cancel", url.Values{"csrf": {""}})
	require.Equal(t, http.StatusForbidden, resp.StatusCode, "no CSRF token")
	resp, _ = operator.Post(t, "/messages/"+id+"/cancel", url.Values{"csrf": {viewer.CSRF}})
	require.Equal(t, http.StatusForbidden, resp.StatusCode, "another session's CSRF token")
	f.waitStatus(t, id, notify.StatusQueued)
	resp, _ = operator.Post(t, "/messages/"+id+"/cancel", nil)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	_, body = operator.Get(t, "/messages/"+id)
	require.Contains(t, body, "The request is canceled.")
	require.Contains(t, body, `id="status" class="status-canceled"`)
	r, err := f.env.Owner.Dashboard(ctx, "GET", "/v1/audit-logs?action=notification.cancel", nil)
	require.NoError(t, err)
	require.Contains(t, string(r.Body), id)
}

// TestConsoleRouteRoles walks the console's whole route table: every
// member route answers 403 to the roles it does not list and lets the
// others through, with a valid CSRF token on writes.
func TestConsoleRouteRoles(t *testing.T) {
	t.Parallel()
	e := notifytest.StartDaemon(t)
	sessions := map[notify.Role]*notifytest.Console{notify.RoleOwner: e.ConsoleLogin(t, e.Email, e.Password)}
	for _, r := range []notify.Role{notify.RoleAdmin, notify.RoleOperator, notify.RoleViewer} {
		sessions[r] = e.ConsoleMember(t, string(r))
	}
	const id = "00000000-0000-7000-8000-000000000000"
	routes := web.New(e.Daemon.ConsoleOptions(nil)).Routes()
	members := 0
	for _, rt := range routes {
		path := strings.ReplaceAll(rt.Path, "{$}", "")
		for strings.Contains(path, "{") {
			i, j := strings.Index(path, "{"), strings.Index(path, "}")
			path = path[:i] + id + path[j+1:]
		}
		if rt.Auth != web.Member {
			continue
		}
		members++
		require.NotEmpty(t, rt.Roles, "%s has no roles", rt.Pattern())
		for role, c := range sessions {
			var resp *http.Response
			var body string
			if rt.Method == "GET" {
				resp, body = c.Get(t, path)
			} else {
				c.Get(t, "/")
				resp, body = c.Post(t, path, nil)
			}
			if !role.Allowed(rt.Roles) {
				require.Equal(t, http.StatusForbidden, resp.StatusCode, "%s as %s", rt.Pattern(), role)
				require.Contains(t, body, "Role "+string(role)+" is not allowed", rt.Pattern())
				continue
			}
			require.NotContains(t, []int{401, 403}, resp.StatusCode, "%s as %s: %s", rt.Pattern(), role, body)
			require.Less(t, resp.StatusCode, 500, "%s as %s", rt.Pattern(), role)
		}
	}
	require.GreaterOrEqual(t, members, len(web.Sections), "every section has a member route")
	// Without a session every member route sends the browser to log in.
	anon := e.NewConsole(t)
	resp, _ := anon.Get(t, "/messages")
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
}
