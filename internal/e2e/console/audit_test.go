package console_test

import (
	"html"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestConsoleAuditLog: the audit log lists console writes with the actor's
// email, filters by action and target type, pages with Older, escapes
// payloads, and refuses a bad filter with 400; another workspace's
// entries are not shown.
func TestConsoleAuditLog(t *testing.T) {
	t.Parallel()
	f := setup(t)
	env := f.env
	const evil = `<script>alert(1)</script>`
	for i := 0; i < 55; i++ {
		r, err := env.Owner.Dashboard(ctx, "PATCH", "/v1/workspace", map[string]string{"name": "Name " + strconv.Itoa(i) + " " + evil})
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	}
	viewer := env.ConsoleMember(t, "viewer")

	resp, body := viewer.Get(t, "/audit-log")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, 50, strings.Count(body, "<tr data-audit-id="), "a page is 50 entries")
	require.Contains(t, body, `class="mono audit-action">member.add</a>`)
	require.Contains(t, body, env.Email, "the actor is shown by email")
	require.NotContains(t, body, evil)
	require.Contains(t, body, "Name 54 \\u003cscript\\u003e", "the payload is JSON text, escaped")

	_, body = viewer.Get(t, "/audit-log?action=workspace.updated")
	require.Equal(t, 50, strings.Count(body, "<tr data-audit-id="))
	require.NotContains(t, body, ">member.add<")
	i := strings.Index(body, `rel="next" id="next-page"`)
	require.Positive(t, i, "an older page")
	next := html.UnescapeString(body[strings.LastIndex(body[:i], `href="`)+6 : i-2])
	require.Contains(t, next, "action=workspace.updated")
	resp, body = viewer.Get(t, next)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, 5, strings.Count(body, "<tr data-audit-id="), "55 updates: 50 then 5")
	require.Contains(t, body, "Name 0 ")
	require.NotContains(t, body, `id="next-page"`)

	_, body = viewer.Get(t, "/audit-log?targetType=member")
	require.Equal(t, 1, strings.Count(body, "<tr data-audit-id="), body)
	resp, body = viewer.Get(t, "/audit-log?action="+strings.Repeat("a", 101))
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Contains(t, body, "action must be at most 100 characters")
	resp, body = viewer.Get(t, "/audit-log?cursor=bogus")
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Contains(t, body, "cursor is not valid")

	env.NewWorkspace(t, "Other", "other@example.com")
	other := env.ConsoleLogin(t, "other@example.com", "correct horse battery")
	_, body = other.Get(t, "/audit-log")
	require.NotContains(t, body, "Name 54")
}
