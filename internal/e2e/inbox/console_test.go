package inbox_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notifytest"
)

// TestInboxInConsole: the Inbox section shows the settings; a recipient's
// page lists the inbox with its counts; an inapp message's page shows its
// inbox states; a viewer sees them all.
func TestInboxInConsole(t *testing.T) {
	t.Parallel()
	env, key := setup(t)
	c := env.ConsoleMember(t, "viewer")
	_, body := c.Get(t, "/inbox")
	require.Contains(t, body, "not set yet")
	require.Contains(t, body, "none: browsers cannot call the inbox API")

	notifytest.DashboardCall(t, env.Owner, "PUT", "/v1/inbox-settings", map[string]any{"allowedOrigins": []string{"https://app.example.com"}}, http.StatusOK)
	res := notifytest.Send(t, key, inapp("u-1", "Console title", "Console <text>"))
	notifytest.Wait(t, key, res.RequestID)
	tok := mint(t, key, "u-1")
	m := get[page](t, env, "/v1/inbox/messages", tok).Messages[0]
	post(t, env, "/v1/inbox/messages/"+m.ID+"/read", tok, 200)

	resp, body := c.Get(t, "/inbox")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, body, "<code>https://app.example.com</code>")
	require.Contains(t, body, `<dd id="inbox-secret">set</dd>`)

	_, body = c.Get(t, "/recipients/u-1")
	require.Contains(t, body, "0 unread, 0 unseen")
	require.Contains(t, body, "Console title")
	require.Contains(t, body, "Console &lt;text&gt;")
	_, body = c.Get(t, "/recipients/u-2")
	require.Contains(t, body, `id="no-inbox"`)

	_, body = c.Get(t, "/messages/"+res.RequestID)
	require.Contains(t, body, `id="inbox-states"`)
	require.Contains(t, body, m.ID)
}
