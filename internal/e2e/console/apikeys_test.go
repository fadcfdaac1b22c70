package console_test

import (
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

var tokenRE = regexp.MustCompile(`<code id="key-token">([^<]+)</code>`)
var hmacRE = regexp.MustCompile(`<code id="key-hmac">([^<]+)</code>`)

// TestConsoleAPIKeys: create shows the secrets once (they sign a real
// request), the list never shows them, rotate shows new ones and the old
// stop working, suspend/resume/revoke, bad input shows the form again,
// names escaped; a viewer sees no write control and a forged POST is
// refused; another workspace's key is 404.
func TestConsoleAPIKeys(t *testing.T) {
	t.Parallel()
	f := setup(t)
	env := f.env
	c := env.ConsoleLogin(t, env.Email, env.Password)
	const evil = `<script>alert(1)</script>`

	c.Get(t, "/api-keys")
	resp, body := c.Post(t, "/api-keys", url.Values{"name": {evil}, "scopes": {"notifications:send", "notifications:read"}})
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	require.NotContains(t, body, evil)
	require.Contains(t, body, `<span id="new-key-name">&lt;script&gt;alert(1)&lt;/script&gt;</span>`)
	tok, hm := tokenRE.FindStringSubmatch(body), hmacRE.FindStringSubmatch(body)
	require.NotNil(t, tok)
	require.NotNil(t, hm)
	require.Contains(t, body, `data-copy="key-token"`)
	keyID, keySecret, ok := strings.Cut(tok[1], ".")
	require.NotEmpty(t, keySecret)
	require.True(t, ok, tok[1])
	idRE := regexp.MustCompile(`<tr data-key-id="([^"]+)"><td class="key-name">&lt;script&gt;`)
	m := idRE.FindStringSubmatch(body)
	require.NotNil(t, m)
	id := m[1]

	// The secrets sign a real request.
	k := client.New(env.Daemon.URL())
	k.APIKey, k.HMACSecret = tok[1], hm[1]
	r, err := k.Signed(ctx, "GET", "/v1/notifications/00000000-0000-7000-8000-000000000000", nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusNotFound, r.Status, string(r.Body))

	// The list shows them no more.
	_, body = c.Get(t, "/api-keys")
	require.Contains(t, body, keyID)
	require.NotContains(t, body, keySecret)
	require.NotContains(t, body, hm[1])
	require.NotContains(t, body, `id="new-secret"`)

	// Rotate: new secrets once, the old ones refused.
	resp, body = c.Post(t, "/api-keys/"+id+"/rotate", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	tok2 := tokenRE.FindStringSubmatch(body)
	require.NotNil(t, tok2)
	require.NotEqual(t, tok[1], tok2[1])
	r, err = k.Signed(ctx, "GET", "/v1/notifications/00000000-0000-7000-8000-000000000000", nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusUnauthorized, r.Status)

	for _, step := range []struct{ action, status string }{{"suspend", "suspended"}, {"resume", "active"}, {"revoke", "revoked"}} {
		resp, _ = c.Post(t, "/api-keys/"+id+"/"+step.action, nil)
		require.Equal(t, http.StatusSeeOther, resp.StatusCode, step.action)
		_, body = c.Get(t, "/api-keys")
		require.Contains(t, body, `<td class="key-status">`+step.status+`</td>`, step.action)
	}
	require.NotContains(t, body, `action="/api-keys/`+id+`/rotate"`, "a revoked key has no actions")
	resp, body = c.Post(t, "/api-keys/"+id+"/resume", nil)
	require.Equal(t, http.StatusConflict, resp.StatusCode)
	require.Contains(t, body, "API key is revoked")

	resp, body = c.Post(t, "/api-keys", url.Values{"name": {"no scopes"}})
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Contains(t, body, "scopes must hold at least one scope")
	require.Contains(t, body, `value="no scopes"`)

	r, err = env.Owner.Dashboard(ctx, "GET", "/v1/audit-logs?targetType=api_key", nil)
	require.NoError(t, err)
	for _, a := range []string{"api_key.create", "api_key.rotate", "api_key.suspend", "api_key.resume", "api_key.revoke"} {
		require.Contains(t, string(r.Body), `"`+a+`"`)
	}

	// Roles: operator and viewer see the list, no write control; a
	// forged POST with a valid token is refused.
	for _, role := range []string{"operator", "viewer"} {
		v := env.ConsoleMember(t, role)
		_, body = v.Get(t, "/api-keys")
		require.Contains(t, body, keyID)
		for _, ctl := range []string{`id="create-key"`, `/rotate"`, `/suspend"`, `/revoke"`, `action="/api-keys"`} {
			require.NotContains(t, body, ctl, role)
		}
		resp, body = v.Post(t, "/api-keys", url.Values{"name": {"forged"}, "scopes": {"notifications:send"}})
		require.Equal(t, http.StatusForbidden, resp.StatusCode)
		require.Contains(t, body, "Role "+role+" is not allowed")
	}

	env.NewWorkspace(t, "Other", "other@example.com")
	other := env.ConsoleLogin(t, "other@example.com", "correct horse battery")
	for _, a := range []string{"rotate", "suspend", "revoke"} {
		resp, _ = other.Post(t, "/api-keys/"+id+"/"+a, nil)
		require.Equal(t, http.StatusNotFound, resp.StatusCode, a)
	}
}

// TestConsoleAPIKeyInBrowser: create a key in Chromium, see its secret
// once; after a reload (which must not post the form again) it is gone
// and there is still one key of that name.
func TestConsoleAPIKeyInBrowser(t *testing.T) {
	// Not parallel: one Chromium fewer at a time on a loaded machine
	// (the other browser tests start theirs in parallel).
	env := notifytest.StartDaemon(t)
	b := notifytest.StartChromium(t)
	base := env.Daemon.URL()
	notifytest.ConsoleLoginInBrowser(t, b, base, env.Email, env.Password)
	b.Run(t, chromedp.Click(`a[href="/api-keys"]`, chromedp.ByQuery))
	b.WaitText(t, "h1", "API keys")
	b.Run(t, chromedp.SendKeys("#k-name", "browser key", chromedp.ByID))
	b.Run(t, chromedp.Click("#create-key-button", chromedp.ByID))
	b.WaitText(t, "#new-key-name", "browser key")
	var token, loc string
	b.Run(t, chromedp.Text("#key-token", &token, chromedp.ByID), chromedp.Location(&loc))
	require.Regexp(t, `^nk_[0-9a-f]+\.`, token)
	require.Equal(t, base+"/api-keys", loc, "the address is the list's again")
	screenshot(t, b, "api-key")

	b.Run(t, chromedp.Reload())
	b.WaitText(t, "h1", "API keys")
	b.Run(t, chromedp.WaitVisible("#api-keys", chromedp.ByID))
	var page string
	b.Run(t, chromedp.OuterHTML("html", &page, chromedp.ByQuery))
	require.NotContains(t, page, token, "the secret is shown once")
	require.NotContains(t, page, `id="new-secret"`)
	require.Equal(t, 1, strings.Count(page, `<td class="key-name">browser key</td>`), "the reload did not create a second key")
}
