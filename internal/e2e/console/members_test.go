package console_test

import (
	"net/http"
	"net/url"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestConsoleMembers: an admin adds a member without a password (none is
// generated or shown; the account cannot log in until the admin sets its
// first password, once), changes the role, removes the member; the last
// owner stays; emails escaped; a viewer sees no write control and a
// forged POST is refused; another workspace's member is 404.
func TestConsoleMembers(t *testing.T) {
	t.Parallel()
	f := setup(t)
	env := f.env
	admin := env.ConsoleMember(t, "admin")

	admin.Get(t, "/members")
	resp, body := admin.Post(t, "/members", url.Values{"email": {"new.member@example.com"}, "role": {"operator"}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, body)
	_, body = admin.Get(t, "/members")
	require.NotContains(t, body, `member-password`, "no password is generated for the admin to see")
	m := regexp.MustCompile(`<tr data-user-id="([^"]+)"><td class="member-email">new.member@example.com</td>`).FindStringSubmatch(body)
	require.NotNil(t, m)
	userID := m[1]
	require.Contains(t, body, `action="/members/`+userID+`/password"`, "a member without a password gets a form to set the first one")
	password := "first password 1"
	resp, _ = admin.Post(t, "/members/"+userID+"/password", url.Values{"password": {password}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	_, body = admin.Get(t, "/members")
	require.Contains(t, body, "new.member@example.com can now log in with the password you set.")
	require.NotContains(t, body, `action="/members/`+userID+`/password"`, "the first password is set once")
	resp, body = admin.Post(t, "/members/"+userID+"/password", url.Values{"password": {"second password 2"}})
	require.Equal(t, http.StatusConflict, resp.StatusCode)
	require.Contains(t, body, "only they can change it")
	member := env.ConsoleLogin(t, "new.member@example.com", password)
	_, body = member.Get(t, "/members")
	require.Contains(t, body, `<span id="who-role">operator</span>`)
	require.NotContains(t, body, password)
	require.NotContains(t, body, `id="add-member"`, "an operator adds no one")
	require.NotContains(t, body, `/remove"`)

	// An admin cannot grant owner (the service's rule, shown as 403).
	resp, body = admin.Post(t, "/members", url.Values{"email": {"x@example.com"}, "role": {"owner"}, "password": {"member password 2"}})
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	require.Contains(t, body, "Only an owner can grant the owner role")
	resp, body = admin.Post(t, "/members", url.Values{"email": {"not an email"}, "role": {"viewer"}})
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Contains(t, body, `value="not an email"`)

	resp, _ = admin.Post(t, "/members/"+userID+"/role", url.Values{"role": {"viewer"}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	_, body = admin.Get(t, "/members")
	require.Contains(t, body, "new.member@example.com is now viewer.")
	_, body = member.Get(t, "/members")
	require.Contains(t, body, `<span id="who-role">viewer</span>`)
	require.NotContains(t, body, `/role"`, "a viewer changes no role")
	resp, body = member.Post(t, "/members/"+userID+"/role", url.Values{"role": {"owner"}})
	require.Equal(t, http.StatusForbidden, resp.StatusCode, "a forged POST with the viewer's valid token")
	require.Contains(t, body, "Role viewer is not allowed")
	resp, _ = member.Post(t, "/members", url.Values{"email": {"forged@example.com"}, "role": {"viewer"}})
	require.Equal(t, http.StatusForbidden, resp.StatusCode)

	// The last owner cannot be removed; an admin removes the member.
	owner := env.ConsoleLogin(t, env.Email, env.Password)
	_, body = owner.Get(t, "/members")
	m = regexp.MustCompile(`<tr data-user-id="([^"]+)"><td class="member-email">` + regexp.QuoteMeta(env.Email)).FindStringSubmatch(body)
	require.NotNil(t, m)
	resp, body = owner.Post(t, "/members/"+m[1]+"/remove", nil)
	require.Equal(t, http.StatusConflict, resp.StatusCode)
	require.Contains(t, body, "The last owner of a workspace cannot be removed")
	resp, _ = admin.Post(t, "/members/"+userID+"/remove", nil)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	_, body = admin.Get(t, "/members")
	require.NotContains(t, body, "new.member@example.com</td>")
	resp, _ = member.Get(t, "/members")
	require.NotEqual(t, http.StatusOK, resp.StatusCode, "a removed member's session has no workspace")

	env.NewWorkspace(t, "Other", "other@example.com")
	other := env.ConsoleLogin(t, "other@example.com", "correct horse battery")
	_, body = owner.Get(t, "/members")
	m = regexp.MustCompile(`<tr data-user-id="([^"]+)"><td class="member-email">admin-`).FindStringSubmatch(body)
	require.NotNil(t, m)
	resp, _ = other.Post(t, "/members/"+m[1]+"/role", url.Values{"role": {"viewer"}})
	require.Equal(t, http.StatusNotFound, resp.StatusCode, "another workspace's member is 404")
	resp, _ = other.Post(t, "/members/"+m[1]+"/remove", nil)
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	_, body = other.Get(t, "/members")
	require.NotContains(t, body, env.Email)
}
