package console_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/notifytest"
)

// apiCreate posts body to a Dashboard API path as c and answers the
// object under key's id.
func apiCreate(t *testing.T, c *client.Client, path, key string, body any) string {
	t.Helper()
	r, err := c.Dashboard(ctx, "POST", path, body)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	var out map[string]struct {
		ID string `json:"id"`
	}
	require.NoError(t, json.Unmarshal(r.Body, &out))
	require.NotEmpty(t, out[key].ID, string(r.Body))
	return out[key].ID
}

var redirectID = regexp.MustCompile(`^/[a-z-]+/([0-9a-f-]{36})$`)

// createdID is the id in a 303's Location (/section/{id}).
func createdID(t *testing.T, resp *http.Response) string {
	t.Helper()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	m := redirectID.FindStringSubmatch(resp.Header.Get("Location"))
	require.NotNil(t, m, resp.Header.Get("Location"))
	return m[1]
}

// TestConsoleTemplates: create, new versions (the form starts from the
// newest), publish, settings, two versions side by side, bad input shown
// with the form, escaping, messenger review status, and the template
// usable by a send once published.
func TestConsoleTemplates(t *testing.T) {
	t.Parallel()
	f := setup(t)
	c := f.env.ConsoleLogin(t, f.env.Email, f.env.Password)
	const evil = `<script>alert(1)</script>`

	resp, body := c.Get(t, "/templates")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, body, `id="no-templates"`)
	require.Contains(t, body, `id="create-template"`)

	// Bad input: the form again with the service's detail and the values.
	resp, body = c.Post(t, "/templates", url.Values{"name": {"Welcome"}, "code": {""}, "channel": {"sms"}})
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Contains(t, body, "code is required")
	require.Contains(t, body, `value="Welcome"`)

	resp, _ = c.Post(t, "/templates", url.Values{"name": {"Welcome " + evil}, "code": {"welcome"}, "channel": {"sms"}})
	id := createdID(t, resp)
	resp, _ = c.Post(t, "/templates", url.Values{"name": {"Again"}, "code": {"welcome"}, "channel": {"sms"}})
	require.Equal(t, http.StatusConflict, resp.StatusCode, "the code is taken on this channel")

	resp, body = c.Get(t, "/templates/"+id)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.NotContains(t, body, evil)
	require.Contains(t, body, "Welcome &lt;script&gt;alert(1)&lt;/script&gt;")
	require.Contains(t, body, `id="no-versions"`)
	require.NotContains(t, body, `id="review-form"`, "no messenger review for sms")

	resp, body = c.Post(t, "/templates/"+id+"/versions", url.Values{"title": {""}, "text": {" "}})
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Contains(t, body, "text is required")
	resp, _ = c.Post(t, "/templates/"+id+"/versions", url.Values{"title": {""}, "text": {"Hello {{name}} v1 " + evil}, "html": {""}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	_, body = c.Get(t, "/templates/"+id)
	require.Contains(t, body, "Version 1 created")
	require.Contains(t, body, `>Hello {{name}} v1 &lt;script&gt;`, "the new-version form starts from the newest version")
	resp, _ = c.Post(t, "/templates/"+id+"/versions", url.Values{"text": {"Hello {{name}} v2"}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)

	// Publish version 2; sends now take it.
	_, body = c.Get(t, "/templates/"+id)
	require.Contains(t, body, `id="publish-2"`)
	resp, _ = c.Post(t, "/templates/"+id+"/versions/2/publish", nil)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	_, body = c.Get(t, "/templates/"+id)
	require.Contains(t, body, "Version 2 is published.")
	resp, _ = c.Post(t, "/templates/"+id+"/versions/9/publish", nil)
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	resp, _ = c.Post(t, "/templates/"+id+"/versions/x/publish", nil)
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	_, body = c.Get(t, "/templates/"+id)
	require.Contains(t, body, `<dd id="published-version">2</dd>`)
	require.NotContains(t, body, `id="publish-2"`, "a published version has no publish button")
	require.Contains(t, body, `id="publish-1"`)
	_, body = c.Get(t, "/templates")
	require.Contains(t, body, `<td class="published">version 2</td>`)
	r, err := f.key.Signed(ctx, "POST", "/v1/notifications", map[string]any{"channel": "sms",
		"recipient": map[string]any{"address": "010-1234-5678"}, "content": map[string]any{"templateCode": "welcome", "templateVariables": map[string]string{"name": "Kim"}}})
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))

	// Side by side: the two newest by default, any two by choice.
	resp, body = c.Get(t, "/templates/"+id+"/compare")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Regexp(t, `(?s)id="left".*Version <span class="version-number">1</span>.*v1 &lt;script&gt;.*id="right".*Version <span class="version-number">2</span>.*v2`, body)
	require.NotContains(t, body, evil)
	_, body = c.Get(t, "/templates/"+id+"/compare?a=2&b=1")
	require.Regexp(t, `(?s)id="left".*>2</span>.*id="right".*>1</span>`, body)
	resp, _ = c.Get(t, "/templates/"+id+"/compare?a=7")
	require.Equal(t, http.StatusNotFound, resp.StatusCode)

	// Settings: rename, deactivate; bad input keeps the page.
	resp, body = c.Post(t, "/templates/"+id, url.Values{"name": {" "}})
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Contains(t, body, "name must not be empty")
	resp, _ = c.Post(t, "/templates/"+id, url.Values{"name": {"Renamed"}, "status": {"inactive"}, "providerAccountId": {""},
		"vendorTemplateId": {"V-1"}, "senderProfileKey": {""}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	_, body = c.Get(t, "/templates/"+id)
	require.Contains(t, body, `<span id="template-name">Renamed</span>`)
	require.Contains(t, body, `<dd id="template-status">inactive</dd>`)
	require.Contains(t, body, `>V-1</dd>`)

	// Messenger review (msgr_alimtalk): PENDING at create, set by an admin.
	resp, _ = c.Post(t, "/templates", url.Values{"name": {"Order"}, "code": {"order"}, "channel": {"msgr_alimtalk"}})
	at := createdID(t, resp)
	_, body = c.Get(t, "/templates/"+at)
	require.Contains(t, body, `<dd id="review-status">PENDING</dd>`)
	resp, _ = c.Post(t, "/templates/"+at+"/review-status", url.Values{"reviewStatus": {"APPROVED"}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	_, body = c.Get(t, "/templates/"+at)
	require.Contains(t, body, `<dd id="review-status">APPROVED</dd>`)
	resp, body = c.Post(t, "/templates/"+id+"/review-status", url.Values{"reviewStatus": {"APPROVED"}})
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Contains(t, body, "reviewStatus applies only to msgr_alimtalk templates")

	// Every write is audited as the API's.
	r, err = f.env.Owner.Dashboard(ctx, "GET", "/v1/audit-logs?targetId="+id, nil)
	require.NoError(t, err)
	for _, action := range []string{"template.create", "template.version.create", "template.version.publish", "template.update"} {
		require.Contains(t, string(r.Body), `"`+action+`"`)
	}
}

// TestConsoleTemplatesRoles: a viewer sees no write control and a
// viewer's own POST (valid CSRF token) is refused; an operator may not
// set a review status; another workspace's template is 404.
func TestConsoleTemplatesRoles(t *testing.T) {
	t.Parallel()
	f := setup(t)
	id := apiCreate(t, f.env.Owner, "/v1/templates", "template", map[string]string{"code": "c", "channel": "msgr_alimtalk", "name": "T"})
	r, err := f.env.Owner.Dashboard(ctx, "POST", "/v1/templates/"+id+"/versions", map[string]string{"text": "one"})
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, r.Status)
	viewer := f.env.ConsoleMember(t, "viewer")
	for _, path := range []string{"/templates", "/templates/" + id} {
		resp, body := viewer.Get(t, path)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		// The preview form is the one POST a viewer has: it writes nothing.
		body = strings.ReplaceAll(body, `method="post" action="/templates/`+id+`/preview"`, "")
		require.NotContains(t, body, `method="post" action="/templates`, "%s shows the viewer a write form", path)
	}
	for _, path := range []string{"/templates", "/templates/" + id, "/templates/" + id + "/versions", "/templates/" + id + "/versions/1/publish", "/templates/" + id + "/review-status",
		"/templates/" + id + "/versions/1/delete"} {
		resp, body := viewer.Post(t, path, url.Values{"name": {"x"}, "code": {"x"}, "channel": {"sms"}, "text": {"x"}, "reviewStatus": {"APPROVED"}})
		require.Equal(t, http.StatusForbidden, resp.StatusCode, path)
		require.Contains(t, body, "Role viewer is not allowed", path)
	}
	operator := f.env.ConsoleMember(t, "operator")
	_, body := operator.Get(t, "/templates/"+id)
	require.Contains(t, body, `id="publish-1"`)
	require.NotContains(t, body, `id="review-form"`, "the review status is the admin's")
	resp, _ := operator.Post(t, "/templates/"+id+"/review-status", url.Values{"reviewStatus": {"APPROVED"}})
	require.Equal(t, http.StatusForbidden, resp.StatusCode)

	other, _ := f.env.NewWorkspace(t, "Other", "other@example.com")
	oid := apiCreate(t, other, "/v1/templates", "template", map[string]string{"code": "c", "channel": "sms", "name": "Theirs"})
	owner := f.env.ConsoleLogin(t, f.env.Email, f.env.Password)
	for _, path := range []string{"/templates/" + oid, "/templates/" + oid + "/compare"} {
		resp, _ := owner.Get(t, path)
		require.Equal(t, http.StatusNotFound, resp.StatusCode, path)
	}
	for _, path := range []string{"/templates/" + oid, "/templates/" + oid + "/versions", "/templates/" + oid + "/versions/1/publish",
		"/templates/" + oid + "/versions/1/delete"} {
		resp, _ := owner.Post(t, path, url.Values{"name": {"mine"}, "text": {"mine"}})
		require.Equal(t, http.StatusNotFound, resp.StatusCode, path)
	}
	_, body = owner.Get(t, "/templates")
	require.NotContains(t, body, "Theirs")
}

// TestConsoleTemplatesInBrowser: log in, create a template, write two
// versions, publish one, see it published, and see both side by side.
func TestConsoleTemplatesInBrowser(t *testing.T) {
	t.Parallel()
	f := setup(t)
	b := notifytest.StartChromium(t)
	base := f.env.Daemon.URL()
	b.Run(t, chromedp.EmulateViewport(1200, 900))
	notifytest.ConsoleLoginInBrowser(t, b, base, f.env.Email, f.env.Password)

	b.Run(t, chromedp.Click(`a[href="/templates"]`, chromedp.ByQuery))
	b.WaitText(t, "h1", "Templates")
	b.Run(t, chromedp.SendKeys("#t-name", "Welcome", chromedp.ByID),
		chromedp.SendKeys("#t-code", "welcome", chromedp.ByID),
		chromedp.SetValue("#t-channel", "sms", chromedp.ByID))
	b.Run(t, chromedp.Click("#create", chromedp.ByID))
	b.WaitText(t, "#template-name", "Welcome")
	b.WaitText(t, "#published-version", "none")

	b.Run(t, chromedp.SendKeys("#v-text", "Hello {{name}}, first", chromedp.ByID))
	b.Run(t, chromedp.Click("#save-version", chromedp.ByID))
	b.WaitText(t, `tr[data-version="1"] .version-published`, "draft")
	// The second version starts from the first: replace its text.
	b.Run(t, chromedp.Evaluate(`document.getElementById("v-text").value = ""`, nil), chromedp.SendKeys("#v-text", "Hi {{name}}, second", chromedp.ByID))
	b.Run(t, chromedp.Click("#save-version", chromedp.ByID))
	b.WaitText(t, `tr[data-version="2"] .version-published`, "draft")

	b.Run(t, chromedp.Click("#publish-2", chromedp.ByID))
	b.WaitText(t, "#published-version", "2")
	var published string
	b.Run(t, chromedp.Text(`tr[data-version="2"] .version-published`, &published, chromedp.ByQuery))
	require.NotEqual(t, "draft", published)
	b.Run(t, chromedp.Click(`a[href="/templates"]`, chromedp.ByQuery))
	b.WaitText(t, "h1", "Templates")
	b.WaitText(t, "td.published", "version 2")

	b.Run(t, chromedp.Click(`#templates a`, chromedp.ByQuery))
	b.WaitText(t, "#template-name", "Welcome")
	b.Run(t, chromedp.Click("#compare", chromedp.ByID))
	b.WaitText(t, "#left .version-number", "1")
	b.WaitText(t, "#right .version-number", "2")
	var left, right string
	var leftX, rightX float64
	b.Run(t, chromedp.Text("#left .v-text", &left, chromedp.ByQuery), chromedp.Text("#right .v-text", &right, chromedp.ByQuery),
		chromedp.Evaluate(`document.getElementById("left").getBoundingClientRect().left`, &leftX),
		chromedp.Evaluate(`document.getElementById("right").getBoundingClientRect().left`, &rightX))
	require.Equal(t, "Hello {{name}}, first", left)
	require.Equal(t, "Hi {{name}}, second", right)
	require.Less(t, leftX, rightX, "the versions stand next to each other")
	require.False(t, strings.Contains(left, "second"))
}
