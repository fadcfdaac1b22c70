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
// the categories list; an operator edits a profile and creates a
// category, an admin erases a profile and deletes a category, a viewer
// does neither; another workspace's profile is 404.
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

	require.NotContains(t, body, `id="save-profile"`, "editing is the operator's")
	require.NotContains(t, body, `id="erase-profile"`)
	resp, _ = viewer.Post(t, "/recipients/u-42", url.Values{"name": {"x"}})
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	_, body = viewer.Get(t, "/categories")
	require.NotContains(t, body, `id="create-category"`)

	// Editing: an operator saves the profile form (audited as the API's
	// PATCH), a refused value is a flash and changes nothing; erasing and
	// deleting a category are the admin's.
	operator := env.ConsoleMember(t, "operator")
	_, body = operator.Get(t, "/recipients/u-42")
	require.Contains(t, body, `id="save-profile"`)
	require.NotContains(t, body, `id="erase-profile"`)
	resp, _ = operator.Post(t, "/recipients/u-42", url.Values{"name": {"Minji Kim"}, "email": {"kim@example.com"},
		"phone": {"010-1234-5678"}, "timeZone": {"America/New_York"}, "locale": {"en-US"}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	_, body = operator.Get(t, "/recipients/u-42")
	require.Contains(t, body, "Profile saved.")
	require.Contains(t, body, `<dd id="recipient-name">Minji Kim</dd>`)
	require.Contains(t, body, `<dd id="recipient-email">kim@example.com</dd>`)
	require.Contains(t, body, "America/New_York")
	require.Equal(t, []any{"name", "phone", "email", "timeZone", "locale"},
		notifytest.Audit(t, env.Owner, "recipient.update")[0].Payload["fields"])
	resp, _ = operator.Post(t, "/recipients/u-42", url.Values{"timeZone": {"Mars/Olympus"}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	_, body = operator.Get(t, "/recipients/u-42")
	require.Contains(t, body, "Not saved: timeZone must be an IANA time zone")
	require.Contains(t, body, "America/New_York", "nothing changed")
	resp, _ = operator.Post(t, "/recipients/u-42/delete", url.Values{})
	require.Equal(t, http.StatusForbidden, resp.StatusCode)

	resp, _ = operator.Post(t, "/categories", url.Values{"key": {"digest"}, "name": {"Weekly digest"}, "advertising": {"on"}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	_, body = operator.Get(t, "/categories")
	require.Contains(t, body, "Category digest created.")
	require.Contains(t, body, `data-key="digest"`)
	got := notifytest.DashboardCall(t, env.Owner, "GET", "/v1/categories/digest", nil, http.StatusOK)
	require.Equal(t, true, notifytest.Field[map[string]any](t, got, "category")["advertising"])
	resp, _ = operator.Post(t, "/categories", url.Values{"key": {"digest"}, "name": {"Again"}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	_, body = operator.Get(t, "/categories")
	require.Contains(t, body, "Not created: ")
	resp, _ = operator.Post(t, "/categories/digest/delete", url.Values{})
	require.Equal(t, http.StatusForbidden, resp.StatusCode)

	resp, _ = c.Post(t, "/categories/digest/delete", url.Values{})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	_, body = c.Get(t, "/categories")
	require.NotContains(t, body, `data-key="digest"`)
	resp, _ = c.Post(t, "/recipients/u-41/delete", url.Values{})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	resp, _ = c.Get(t, "/recipients/u-41")
	require.Equal(t, http.StatusNotFound, resp.StatusCode, "erased")
	require.Len(t, notifytest.Audit(t, env.Owner, "recipient.delete"), 1)

	resp, _ = c.Get(t, "/recipients/nobody")
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	other, _ := env.NewWorkspace(t, "Other", "other-rc@example.com")
	notifytest.DashboardCall(t, other, "PUT", "/v1/recipients/theirs", map[string]any{"name": "x"}, http.StatusCreated)
	resp, _ = c.Get(t, "/recipients/theirs")
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
}
