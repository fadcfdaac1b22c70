package console_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notifytest"
)

// subscriberID finds a subscriber's id by its address through the API.
func subscriberID(t *testing.T, env *notifytest.Env, address string) string {
	t.Helper()
	r, err := env.Owner.Dashboard(ctx, "GET", "/v1/newsletter/subscribers?search="+url.QueryEscape(address), nil)
	require.NoError(t, err)
	var out struct {
		Subscribers []struct {
			ID            string            `json:"id"`
			Address       string            `json:"address"`
			Name          string            `json:"name"`
			ConsentStatus string            `json:"consentStatus"`
			Attributes    map[string]string `json:"attributes"`
		} `json:"subscribers"`
	}
	require.NoError(t, json.Unmarshal(r.Body, &out), string(r.Body))
	require.Len(t, out.Subscribers, 1, string(r.Body))
	require.Equal(t, address, out.Subscribers[0].Address)
	return out.Subscribers[0].ID
}

// subscriberCSV is an import file: a header, two valid rows (one named
// with a script), a row without a valid address, a quoted comma.
const subscriberCSV = "email,name,plan\n" +
	"ann@example.com,<script>alert(1)</script>,pro\n" +
	"bob@example.com,\"Bob, Jr.\",free\n" +
	"not-an-address,Nobody,pro\n"

// TestConsoleSubscribers: a CSV import (multipart, CSRF-checked) shows
// its counts; the list escapes a name with a script and searches; an
// operator edits (audited); a viewer sees no write control and a forged
// edit or import from the viewer's session is refused; another
// workspace's subscriber is 404.
func TestConsoleSubscribers(t *testing.T) {
	t.Parallel()
	env := notifytest.StartDaemon(t)
	c := env.ConsoleLogin(t, env.Email, env.Password)

	resp, body := c.Get(t, "/newsletter/subscribers")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, body, `id="no-subscribers"`)
	require.Contains(t, body, `enctype="multipart/form-data"`)
	resp, _ = c.PostFile(t, "/newsletter/subscribers/import", url.Values{"csrf": {""}}, "file", "list.csv", []byte(subscriberCSV))
	require.Equal(t, http.StatusForbidden, resp.StatusCode, "no CSRF token in the multipart form")

	resp, body = c.PostFile(t, "/newsletter/subscribers/import", url.Values{"consentSource": {"console"}}, "file", "list.csv", []byte(subscriberCSV))
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	for id, n := range map[string]string{"import-total": "3", "import-created": "2", "import-updated": "0", "import-skipped": "1"} {
		require.Contains(t, body, `id="`+id+`">`+n+`<`, id)
	}
	require.NotContains(t, body, "<script>alert(1)</script>")
	require.Contains(t, body, "&lt;script&gt;alert(1)&lt;/script&gt;")
	require.Contains(t, body, "Bob, Jr.")
	// The same file again updates.
	_, body = c.PostFile(t, "/newsletter/subscribers/import", nil, "file", "list.csv", []byte(subscriberCSV))
	require.Contains(t, body, `id="import-updated">2<`)
	resp, body = c.PostFile(t, "/newsletter/subscribers/import", nil, "file", "bad.csv", []byte("name\nx\n"))
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Contains(t, body, "must name an email")
	resp, body = c.Post(t, "/newsletter/subscribers/import", nil)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Contains(t, body, "Choose a CSV file")

	_, body = c.Get(t, "/newsletter/subscribers?search=bob")
	require.Contains(t, body, "bob@example.com")
	require.NotContains(t, body, "ann@example.com")
	resp, body = c.Get(t, "/newsletter/subscribers?consentStatus=bogus")
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Contains(t, body, "consentStatus must be one of")

	ann := subscriberID(t, env, "ann@example.com")
	operator := env.ConsoleMember(t, "operator")
	resp, body = operator.Get(t, "/newsletter/subscribers/"+ann)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, body, `id="edit-form"`)
	require.NotContains(t, body, `id="delete"`, "deleting is the admin's")
	require.Contains(t, body, "plan=pro")
	require.NotContains(t, body, "<script>alert(1)</script>")
	resp, _ = operator.Post(t, "/newsletter/subscribers/"+ann, url.Values{"name": {"Ann"}, "consentStatus": {"pending"},
		"consentSource": {"desk"}, "attributes": {"plan=team\ncity = Seoul"}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	_, body = operator.Get(t, "/newsletter/subscribers/"+ann)
	require.Contains(t, body, "Subscriber saved.")
	require.Contains(t, body, `id="subscriber-consent">pending<`)
	require.Contains(t, body, "city=Seoul\nplan=team")
	resp, body = operator.Post(t, "/newsletter/subscribers/"+ann, url.Values{"consentStatus": {"maybe"}})
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Contains(t, body, "consentStatus must be one of")
	resp, body = operator.Post(t, "/newsletter/subscribers/"+ann, url.Values{"consentStatus": {"pending"}, "attributes": {"no equals sign"}})
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Contains(t, body, "attributes line 1 must be key=value")
	r, err := env.Owner.Dashboard(ctx, "GET", "/v1/audit-logs?action=subscriber.update", nil)
	require.NoError(t, err)
	require.Contains(t, string(r.Body), ann)

	viewer := env.ConsoleMember(t, "viewer")
	_, body = viewer.Get(t, "/newsletter/subscribers")
	require.Contains(t, body, "bob@example.com")
	require.NotContains(t, body, `id="import-form"`)
	_, body = viewer.Get(t, "/newsletter/subscribers/"+ann)
	require.NotContains(t, body, `id="edit-form"`)
	require.NotContains(t, body, `method="post" action="/newsletter`)
	resp, body = viewer.Post(t, "/newsletter/subscribers/"+ann, url.Values{"name": {"Forged"}, "consentStatus": {"unsubscribed"}})
	require.Equal(t, http.StatusForbidden, resp.StatusCode, "a viewer's forged edit with a valid CSRF token")
	require.Contains(t, body, "Role viewer is not allowed")
	resp, _ = viewer.PostFile(t, "/newsletter/subscribers/import", nil, "file", "list.csv", []byte(subscriberCSV))
	require.Equal(t, http.StatusForbidden, resp.StatusCode, "a viewer's forged import")
	_, body = c.Get(t, "/newsletter/subscribers/"+ann)
	require.Contains(t, body, `id="subscriber-consent">pending<`, "the forged edit changed nothing")
	require.Contains(t, body, `id="delete"`, "the owner may delete")

	env.NewWorkspace(t, "Other", "other-subs@example.com")
	other := env.ConsoleLogin(t, "other-subs@example.com", "correct horse battery")
	resp, _ = other.Get(t, "/newsletter/subscribers/"+ann)
	require.Equal(t, http.StatusNotFound, resp.StatusCode, "another workspace's subscriber")
	resp, _ = other.Post(t, "/newsletter/subscribers/"+ann, url.Values{"consentStatus": {"unsubscribed"}})
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	_, body = other.Get(t, "/newsletter/subscribers")
	require.NotContains(t, body, "ann@example.com")

	resp, _ = c.Post(t, "/newsletter/subscribers/"+ann+"/delete", nil)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	resp, _ = c.Get(t, "/newsletter/subscribers/"+ann)
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
}
