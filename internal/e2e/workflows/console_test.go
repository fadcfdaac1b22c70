package workflows_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestConsole: the Workflows section lists workflows, a workflow's page
// its versions and runs, and a run's page its timeline; another
// workspace's run is 404.
func TestConsole(t *testing.T) {
	t.Parallel()
	env, k := setup(t)
	define(t, env.Owner, "comment", escalation("1s")...)
	s := trigger(t, k, "comment", map[string]any{"recipients": []string{"u-1"}, "payload": map[string]any{"title": "x"}})
	r := waitRun(t, k, s[0].RunID)
	c := env.ConsoleMember(t, "viewer")
	resp, body := c.Get(t, "/workflows")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, body, `href="/workflows/comment"`)
	resp, body = c.Get(t, "/workflows/comment")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, body, "Version 1")
	require.Contains(t, body, "inapp is unread: then next, else end")
	require.Contains(t, body, `href="/workflow-runs/`+r.ID+`"`)
	resp, body = c.Get(t, "/workflow-runs/"+r.ID)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, body, `<dd id="run-status">completed</dd>`)
	for _, id := range r.RequestIDs {
		require.Contains(t, body, `href="/messages/`+id+`"`)
	}
	require.Contains(t, body, "<code>sms</code>")
	env.NewWorkspace(t, "Other", "other@example.com")
	oc := env.ConsoleLogin(t, "other@example.com", "correct horse battery")
	resp, _ = oc.Get(t, "/workflow-runs/"+r.ID)
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	resp, _ = oc.Get(t, "/workflows/comment")
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
}
