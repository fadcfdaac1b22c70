package console_test

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notifytest"
)

// TestConsoleRecipients: the recipients list searches and pages, the
// detail shows the profile, its consents and its preferences (escaped),
// an operator mints a preference link (audited) that a viewer may not;
// the categories list; another workspace's profile is 404.
func TestConsoleRecipients(t *testing.T) {
	t.Parallel()
	env := notifytest.StartDaemon(t)
	c := env.ConsoleLogin(t, env.Email, env.Password)

	resp, body := c.Get(t, "/recipients")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, body, `id="no-recipients"`)
	resp, body = c.Get(t, "/categories")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, body, `id="no-categories"`)

	for i := range 55 {
		notifytest.DashboardCall(t, env.Owner, "PUT", fmt.Sprintf("/v1/recipients/u-%02d", i),
			map[string]any{"name": fmt.Sprintf("Person %02d", i)}, http.StatusCreated)
	}
	notifytest.DashboardCall(t, env.Owner, "PUT", "/v1/recipients/u-42",
		map[string]any{"name": "<script>alert(1)</script>", "email": "minji@example.com", "timeZone": "Asia/Seoul"}, http.StatusOK)
	notifytest.DashboardCall(t, env.Owner, "POST", "/v1/categories",
		map[string]any{"key": "marketing", "name": "Marketing", "advertising": true, "defaultChannels": []string{"email"}}, http.StatusCreated)
	notifytest.DashboardCall(t, env.Owner, "POST", "/v1/categories",
		map[string]any{"key": "security", "name": "Security", "required": true}, http.StatusCreated)
	notifytest.DashboardCall(t, env.Owner, "PUT", "/v1/recipients/u-42/preferences",
		map[string]any{"channels": map[string]bool{"sms": false}, "categories": map[string]any{"marketing": map[string]bool{"email": true}}}, http.StatusOK)
	notifytest.DashboardCall(t, env.Owner, "PUT", "/v1/recipients/u-42/consents/night-advertising",
		map[string]any{"source": "signup form"}, http.StatusOK)

	_, body = c.Get(t, "/recipients")
	require.Equal(t, 50, strings.Count(body, `data-external-id=`), "a page of 50")
	require.NotContains(t, body, "<script>alert(1)")
	require.Contains(t, body, "&lt;script&gt;")
	m := regexp.MustCompile(`href="([^"]+)" rel="next"`).FindStringSubmatch(body)
	require.NotNil(t, m, "a next page")
	_, body = c.Get(t, html.UnescapeString(m[1]))
	require.Equal(t, 5, strings.Count(body, `data-external-id=`), "the rest")
	_, body = c.Get(t, "/recipients?q="+url.QueryEscape("MINJI@"))
	require.Equal(t, 1, strings.Count(body, `data-external-id=`))
	require.Contains(t, body, `data-external-id="u-42"`)

	_, body = c.Get(t, "/recipients/u-42")
	require.Contains(t, body, `<dd id="recipient-email">minji@example.com</dd>`)
	require.Contains(t, body, "Asia/Seoul")
	require.Contains(t, body, "signup form")
	require.Contains(t, body, "night_advertising")
	require.Contains(t, body, `<th scope="row">Marketing (marketing)</th><td></td><td></td><td>on</td>`)
	require.Contains(t, body, `<th scope="row">Every category (channel switch)</th><td>off</td>`)
	require.Contains(t, body, `<th scope="row">Security (security)</th><td>required</td>`)
	require.Contains(t, body, `id="mint-link"`)

	resp, body = c.Post(t, "/recipients/u-42/preference-link", url.Values{})
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	require.Contains(t, body, `id="preference-link"`)
	require.Contains(t, body, env.Daemon.URL()+"/v1/preferences/page?token=")
	entries := notifytest.Audit(t, env.Owner, "recipient.preference_link")
	require.Len(t, entries, 1)
	require.NotNil(t, entries[0].ActorUserID)

	_, body = c.Get(t, "/categories")
	require.Contains(t, body, `data-key="marketing"`)
	require.Contains(t, body, `data-key="security"`)

	viewer := env.ConsoleMember(t, "viewer")
	resp, body = viewer.Get(t, "/recipients/u-42")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.NotContains(t, body, `id="mint-link"`)
	resp, _ = viewer.Post(t, "/recipients/u-42/preference-link", url.Values{})
	require.Equal(t, http.StatusForbidden, resp.StatusCode)

	resp, _ = c.Get(t, "/recipients/nobody")
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	other, _ := env.NewWorkspace(t, "Other", "other-rc@example.com")
	notifytest.DashboardCall(t, other, "PUT", "/v1/recipients/theirs", map[string]any{"name": "x"}, http.StatusCreated)
	resp, _ = c.Get(t, "/recipients/theirs")
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
}
