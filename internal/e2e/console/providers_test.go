package console_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notifytest"
)

// simConfig is the configJson of a vendorb_sms account on the simulator.
func simConfig(t *testing.T, env *notifytest.Env, secret string) string {
	t.Helper()
	b, err := json.Marshal(map[string]string{"base_url": env.SimURL, "vendorb_api_key": "k", "vendorb_api_secret": secret,
		"vendorb_sender": "0212345678"})
	require.NoError(t, err)
	return string(b)
}

// registerInConsole registers a provider through the console's form and
// answers its id.
func registerInConsole(t *testing.T, c *notifytest.Console, kind, name, config string) string {
	t.Helper()
	c.Get(t, "/providers")
	resp, body := c.Post(t, "/providers", url.Values{"providerKind": {kind}, "displayName": {name}, "configJson": {config},
		"enabled": {"1"}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, body)
	loc := resp.Header.Get("Location")
	require.True(t, strings.HasPrefix(loc, "/providers/"), loc)
	return strings.TrimPrefix(loc, "/providers/")
}

// apiRoutes answers the saved routes as "channel/providerId/priority/enabled".
func apiRoutes(t *testing.T, env *notifytest.Env) []string {
	t.Helper()
	r, err := env.Owner.Dashboard(ctx, "GET", "/v1/routes", nil)
	require.NoError(t, err)
	var out struct {
		Routes []struct {
			Channel           string `json:"channel"`
			ProviderAccountID string `json:"providerAccountId"`
			Priority          int    `json:"priority"`
			Enabled           bool   `json:"enabled"`
		} `json:"routes"`
	}
	require.NoError(t, json.Unmarshal(r.Body, &out))
	var rs []string
	for _, r := range out.Routes {
		rs = append(rs, strings.Join([]string{r.Channel, r.ProviderAccountID, strconv.Itoa(r.Priority), map[bool]string{true: "on", false: "off"}[r.Enabled]}, "/"))
	}
	return rs
}

var versionRE = regexp.MustCompile(`name="version" value="([^"]*)"`)

// routesForm is the routes form of the providers page as posted by a
// button: the hidden routes in page order, the enabled ones, the version.
func routesForm(t *testing.T, body string) url.Values {
	t.Helper()
	m := versionRE.FindStringSubmatch(body)
	require.NotNil(t, m, "the page has the routes form")
	f := url.Values{"version": {m[1]}}
	for _, m := range regexp.MustCompile(`name="route" value="([^"]*)"`).FindAllStringSubmatch(body, -1) {
		f.Add("route", m[1])
	}
	for _, m := range regexp.MustCompile(`name="enabled" value="([^"]*)" checked`).FindAllStringSubmatch(body, -1) {
		f.Add("enabled", m[1])
	}
	return f
}

// TestConsoleProviders: register (configJson write-only, never shown),
// a bad configJson shows the form again, edit keeping or replacing the
// configuration, test-send with its result, enable/disable, routes added
// and reordered through the atomic replace, a stale routes form refused.
func TestConsoleProviders(t *testing.T) {
	t.Parallel()
	f := setup(t)
	env := f.env
	c := env.ConsoleLogin(t, env.Email, env.Password)
	const secret = "s3cret-never-shown"
	const evil = `<script>alert(1)</script>`

	resp, body := c.Get(t, "/providers")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, body, `class="provider-name">vendorb_sms</a>`)
	require.Contains(t, body, `<option value="vendorb_sms">vendorb_sms (sms)</option>`)

	// A bad configJson: 400, the form again with kind and name, no config.
	resp, body = c.Post(t, "/providers", url.Values{"providerKind": {"vendorb_sms"}, "displayName": {"Backup"},
		"configJson": {`{"vendorb_api_secret": 5, "x": "` + secret + `"}`}})
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Contains(t, body, "configJson.vendorb_api_secret must be a string")
	require.Contains(t, body, `value="Backup"`)
	require.NotContains(t, body, secret)
	resp, body = c.Post(t, "/providers", url.Values{"providerKind": {"nope"}, "displayName": {"Backup"}})
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Contains(t, body, "providerKind must be one of")

	id := registerInConsole(t, c, "vendorb_sms", evil, simConfig(t, env, secret))
	resp, body = c.Get(t, "/providers/"+id)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, body, "registered.")
	require.NotContains(t, body, secret, "configJson is write-only")
	require.NotContains(t, body, "vendorb_api_key", "not even its keys")
	require.NotContains(t, body, evil)
	require.Contains(t, body, `<span id="provider-name">&lt;script&gt;alert(1)&lt;/script&gt;</span>`)
	_, body = c.Get(t, "/providers")
	require.NotContains(t, body, secret)
	require.NotContains(t, body, evil)

	// Test-send: the result is the recorded request.
	resp, body = c.Post(t, "/providers/"+id+"/test-send", url.Values{"mode": {"test"}, "address": {"010-1234-5678"}, "text": {"console test"}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, body)
	resp, body = c.Get(t, resp.Header.Get("Location"))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, body, `id="test-status" class="status-sent">sent`)
	require.Contains(t, body, `id="test-class">success`)
	// A missing text is the service's 400, shown on the page with the form.
	resp, body = c.Post(t, "/providers/"+id+"/test-send", url.Values{"mode": {"instance"}, "address": {"010-1234-5678"}, "name": {evil}})
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, body)
	require.Contains(t, body, `id="problem"`)
	require.Contains(t, body, `value="&lt;script&gt;alert(1)&lt;/script&gt;"`)
	require.NotContains(t, body, evil)

	// Edit without a new configuration keeps it (the test-send still
	// reaches the simulator); a new one replaces it whole.
	resp, body = c.Post(t, "/providers/"+id, url.Values{"displayName": {"Backup SMS"}, "enabled": {"1"}, "configJson": {"  "}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, body)
	resp, _ = c.Post(t, "/providers/"+id+"/test-send", url.Values{"mode": {"instance"}, "address": {"010-1234-5678"}, "text": {"again"}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	resp, body = c.Post(t, "/providers/"+id, url.Values{"displayName": {"Backup SMS"}, "enabled": {"1"},
		"configJson": {`{"base_url": "http://127.0.0.1:1"}`}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, body)
	resp, body = c.Post(t, "/providers/"+id+"/test-send", url.Values{"mode": {"test"}, "address": {"010-1234-5678"}, "text": {"fails"}})
	require.Equal(t, http.StatusBadGateway, resp.StatusCode, "the provider's failure is shown: %s", body)
	require.Contains(t, body, "Provider send failed")
	resp, body = c.Post(t, "/providers/"+id, url.Values{"displayName": {""}})
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Contains(t, body, "displayName must not be empty")

	// Disable and enable.
	resp, _ = c.Post(t, "/providers/"+id+"/disable", url.Values{"back": {"provider"}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Equal(t, "/providers/"+id, resp.Header.Get("Location"))
	_, body = c.Get(t, "/providers/"+id)
	require.Contains(t, body, `id="provider-state">disabled`)
	resp, body = c.Post(t, "/providers/"+id+"/test-send", url.Values{"mode": {"instance"}, "address": {"010-1234-5678"}, "text": {"x"}})
	require.Equal(t, http.StatusConflict, resp.StatusCode, body)
	resp, _ = c.Post(t, "/providers/"+id+"/enable", nil)
	require.Equal(t, "/providers", resp.Header.Get("Location"))
	_, body = c.Get(t, "/providers")
	require.Contains(t, body, "Provider Backup SMS enabled.")

	// Routes: add the new provider (last), move it up, save a disabled
	// route; each save is the atomic replace.
	first := apiRoutes(t, env)
	require.Len(t, first, 1)
	firstID := strings.Split(first[0], "/")[1]
	form := routesForm(t, body)
	form.Set("add", "sms/"+id)
	form.Set("move", "add")
	resp, _ = c.Post(t, "/routes", form)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Equal(t, []string{"sms/" + firstID + "/1/on", "sms/" + id + "/2/on"}, apiRoutes(t, env))
	_, body = c.Get(t, "/providers")
	stale := routesForm(t, body)
	form = routesForm(t, body)
	form.Set("move", "up/1")
	resp, _ = c.Post(t, "/routes", form)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Equal(t, []string{"sms/" + id + "/1/on", "sms/" + firstID + "/2/on"}, apiRoutes(t, env))
	// The form of before the move is stale: refused, nothing saved.
	stale.Set("move", "remove/0")
	resp, _ = c.Post(t, "/routes", stale)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	_, body = c.Get(t, "/providers")
	require.Contains(t, body, "The routes changed since this page was loaded")
	require.Equal(t, []string{"sms/" + id + "/1/on", "sms/" + firstID + "/2/on"}, apiRoutes(t, env))
	form = routesForm(t, body)
	form.Del("enabled")
	form.Add("enabled", "sms/"+id)
	resp, _ = c.Post(t, "/routes", form)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Equal(t, []string{"sms/" + id + "/1/on", "sms/" + firstID + "/2/off"}, apiRoutes(t, env))
	// A provider of another channel on sms is the service's 400, shown as
	// a flash; a malformed move is 400.
	_, body = c.Get(t, "/providers")
	form = routesForm(t, body)
	form.Set("move", "up/99")
	resp, _ = c.Post(t, "/routes", form)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	form.Set("move", "add")
	form.Set("add", "email/"+id)
	resp, _ = c.Post(t, "/routes", form)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	_, body = c.Get(t, "/providers")
	require.Contains(t, body, "Routes not saved: routes[2]: provider "+id+" sends on channel sms, not email")

	r, err := env.Owner.Dashboard(ctx, "GET", "/v1/audit-logs?action=route.replace", nil)
	require.NoError(t, err)
	// The setup's route and three console saves; the refused ones are not.
	require.Equal(t, 4, strings.Count(string(r.Body), `"route.replace"`), string(r.Body))
}

// TestConsoleProvidersRoles: a viewer sees no write control on the
// providers pages and a forged POST with the viewer's valid CSRF token is
// refused; another workspace's provider is 404.
func TestConsoleProvidersRoles(t *testing.T) {
	t.Parallel()
	f := setup(t)
	env := f.env
	owner := env.ConsoleLogin(t, env.Email, env.Password)
	id := registerInConsole(t, owner, "vendorb_sms", "Second", simConfig(t, env, "x"))
	viewer := env.ConsoleMember(t, "viewer")

	_, body := viewer.Get(t, "/providers")
	require.Contains(t, body, `class="provider-name">Second</a>`)
	for _, ctl := range []string{`id="register-provider"`, `action="/providers"`, `/disable"`, `name="move"`, `action="/routes"`, `name="version"`} {
		require.NotContains(t, body, ctl)
	}
	_, body = viewer.Get(t, "/providers/"+id)
	for _, ctl := range []string{`id="edit-provider"`, `id="test-send"`, `/disable"`, `/enable"`} {
		require.NotContains(t, body, ctl)
	}
	require.NotEmpty(t, viewer.CSRF, "the viewer's page carries the session's token (logout form)")
	for _, path := range []string{"/providers", "/providers/" + id, "/providers/" + id + "/disable", "/providers/" + id + "/test-send", "/routes"} {
		resp, body := viewer.Post(t, path, url.Values{"displayName": {"forged"}, "mode": {"test"}, "text": {"x"}, "address": {"010"}})
		require.Equal(t, http.StatusForbidden, resp.StatusCode, path)
		require.Contains(t, body, "Role viewer is not allowed", path)
	}
	_, body = owner.Get(t, "/providers/"+id)
	require.Contains(t, body, `id="provider-name">Second</span>`, "nothing changed")
	require.Contains(t, body, `id="provider-state">enabled`)

	env.NewWorkspace(t, "Other", "other@example.com")
	other := env.ConsoleLogin(t, "other@example.com", "correct horse battery")
	resp, _ := other.Get(t, "/providers/"+id)
	require.Equal(t, http.StatusNotFound, resp.StatusCode, "another workspace's provider is 404")
	for _, path := range []string{"/providers/" + id, "/providers/" + id + "/disable", "/providers/" + id + "/test-send"} {
		resp, _ = other.Post(t, path, url.Values{"displayName": {"taken"}, "mode": {"test"}, "text": {"x"}, "address": {"010"}})
		require.Equal(t, http.StatusNotFound, resp.StatusCode, path)
	}
	_, body = other.Get(t, "/providers")
	require.NotContains(t, body, id)
}

// TestConsoleProvidersInBrowser: in headless Chromium, register a provider
// against the simulator, test-send it and see the result, add its route,
// move it up with the arrow, then back down by dragging, each order
// persisted (the API's routes and a reload agree).
func TestConsoleProvidersInBrowser(t *testing.T) {
	// Not parallel: one Chromium fewer at a time on a loaded machine
	// (the other browser tests start theirs in parallel).
	f := setup(t)
	env := f.env
	b := notifytest.StartChromium(t)
	base := env.Daemon.URL()
	notifytest.ConsoleLoginInBrowser(t, b, base, env.Email, env.Password)

	b.Run(t, chromedp.Click(`a[href="/providers"]`, chromedp.ByQuery))
	b.WaitText(t, "h1", "Providers & routes")
	b.Run(t, chromedp.Click("#register summary", chromedp.ByQuery))
	b.Run(t, chromedp.SetValue("#p-kind", "vendorb_sms", chromedp.ByID),
		chromedp.SendKeys("#p-name", "Browser SMS", chromedp.ByID),
		chromedp.SetValue("#p-config", simConfig(t, env, "browser-secret"), chromedp.ByID))
	b.Run(t, chromedp.Click("#register-provider", chromedp.ByID))
	b.WaitText(t, "#provider-name", "Browser SMS")
	var page string
	b.Run(t, chromedp.OuterHTML("html", &page, chromedp.ByQuery))
	require.NotContains(t, page, "browser-secret", "configJson is never shown")

	b.Run(t, chromedp.SendKeys("#t-address", "010-1234-5678", chromedp.ByID), chromedp.SendKeys("#t-text", "browser test-send", chromedp.ByID))
	b.Run(t, chromedp.Click("#send-test", chromedp.ByID))
	b.WaitText(t, "#test-status", "sent")
	b.WaitText(t, "#test-class", "success")
	var url string
	b.Run(t, chromedp.Location(&url))
	id := strings.TrimPrefix(strings.Split(url, "?")[0], base+"/providers/")

	// Add its route (last), then move it up with the arrow button.
	b.Run(t, chromedp.Navigate(base+"/providers"))
	b.Run(t, chromedp.WaitVisible("#add-route", chromedp.ByID))
	b.Run(t, chromedp.SetValue("#r-add", "sms/"+id, chromedp.ByID), chromedp.Click("#add-route", chromedp.ByID))
	b.WaitText(t, "table.routes tbody tr:last-child .route-provider a", "Browser SMS")
	first := apiRoutes(t, env)
	require.Len(t, first, 2)
	require.Equal(t, "sms/"+id+"/2/on", first[1])
	b.Run(t, chromedp.Click(`tr.route[data-provider-id="`+id+`"] .route-up`, chromedp.ByQuery))
	b.WaitText(t, "table.routes tbody tr:first-child .route-provider a", "Browser SMS")
	require.Equal(t, "sms/"+id+"/1/on", apiRoutes(t, env)[0])
	b.Run(t, chromedp.Reload())
	b.WaitText(t, "table.routes tbody tr:first-child .route-provider a", "Browser SMS")

	// Drag the first row below the second: the drop saves the new order.
	b.Run(t, chromedp.Evaluate(`(function () {
  var rows = document.querySelectorAll("table.routes tbody tr.route");
  var dt = new DataTransfer();
  var ev = function (type, el) { el.dispatchEvent(new DragEvent(type, {bubbles: true, cancelable: true, dataTransfer: dt})); };
  ev("dragstart", rows[0]); ev("dragover", rows[1]); ev("drop", rows[1]);
})()`, nil))
	b.WaitText(t, "table.routes tbody tr:last-child .route-provider a", "Browser SMS")
	b.WaitText(t, "table.routes tbody tr:last-child .route-priority", "2")
	require.Equal(t, "sms/"+id+"/2/on", apiRoutes(t, env)[1])
}
