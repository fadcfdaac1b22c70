package console_test

import (
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notifytest"
	"github.com/notifyd/notifyd/internal/web"
)

// TestConsoleLoginFormBound is issue 29 finding 9: the login form, read
// before anything is known of its sender, takes no multipart body and at
// most 16 KiB; both refusals are the console's HTML error page.
func TestConsoleLoginFormBound(t *testing.T) {
	t.Parallel()
	e := notifytest.StartDaemon(t)
	c := e.NewConsole(t)
	form := func() url.Values { return url.Values{"email": {e.Email}, "password": {e.Password}} }

	c.Get(t, "/login")
	resp, body := c.PostFile(t, "/login", form(), "file", "big.csv", []byte("a,b\n"))
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, body)
	require.Contains(t, resp.Header.Get("Content-Type"), "text/html")
	require.Contains(t, body, "This form takes no file upload: send it as application/x-www-form-urlencoded")
	require.Empty(t, sessionCookies(resp))

	c.Get(t, "/login")
	big := url.Values{"email": {e.Email}, "password": {e.Password}, "pad": {strings.Repeat("a", 16<<10)}}
	resp, body = c.Post(t, "/login", big)
	require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode, body)
	require.Contains(t, resp.Header.Get("Content-Type"), "text/html")
	require.Contains(t, body, "The form must be at most 16384 bytes")
	require.Empty(t, sessionCookies(resp))

	// A login form of ordinary size logs in.
	c.Get(t, "/login")
	resp, body = c.Post(t, "/login", form())
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, body)
	require.Len(t, sessionCookies(resp), 1)
}

// sessionCookies are the session cookies resp sets, whatever their prefix.
func sessionCookies(resp *http.Response) []*http.Cookie {
	var out []*http.Cookie
	for _, ck := range resp.Cookies() {
		if strings.HasSuffix(ck.Name, "notifyd_session") && ck.Value != "" {
			out = append(out, ck)
		}
	}
	return out
}

// cookieNamed is the cookie name resp sets, or nil.
func cookieNamed(resp *http.Response, name string) *http.Cookie {
	for _, ck := range resp.Cookies() {
		if ck.Name == name {
			return ck
		}
	}
	return nil
}

// TestConsoleLoginToken is issue 29 finding 10: the login form's CSRF
// token is an HMAC of the login cookie's nonce under the server's key,
// with an expiry, not a copy of the cookie: a planted cookie with a field
// of the same value, a token of another nonce, an expired or respelled
// token are refused.
func TestConsoleLoginToken(t *testing.T) {
	t.Parallel()
	clock := &notifytest.Clock{}
	e := notifytest.StartDaemonAt(t, clock.Now)
	form := func(csrf string) url.Values {
		return url.Values{"email": {e.Email}, "password": {e.Password}, "csrf": {csrf}}
	}
	forbidden := func(c *notifytest.Console, csrf, why string) {
		t.Helper()
		resp, body := c.Post(t, "/login", form(csrf))
		require.Equal(t, http.StatusForbidden, resp.StatusCode, why)
		require.Contains(t, body, "The form&#39;s CSRF token is missing or wrong", why)
		require.Empty(t, sessionCookies(resp), why)
	}

	c := e.NewConsole(t)
	resp, _ := c.Get(t, "/login")
	nonce := cookieNamed(resp, "notifyd_login")
	require.NotNil(t, nonce)
	require.NotEmpty(t, c.CSRF)
	require.NotContains(t, c.CSRF, nonce.Value, "the token is not the cookie")
	forbidden(c, nonce.Value, "the cookie's value as the token (double submit)")

	// A cookie planted by another site (or host) with a field of the same
	// value: the attacker cannot make the token without the key.
	planted := e.NewConsole(t)
	u, err := url.Parse(planted.URL)
	require.NoError(t, err)
	planted.HTTP.Jar.SetCookies(u, []*http.Cookie{{Name: "notifyd_login", Value: "chosen-by-the-attacker", Path: "/"}})
	forbidden(planted, "chosen-by-the-attacker", "planted cookie and field")
	// A genuine token of another form's nonce.
	other := e.NewConsole(t)
	other.Get(t, "/login")
	c.Get(t, "/login")
	forbidden(c, other.CSRF, "another nonce's token")
	// The token respelled: its expiry with a leading zero.
	c.Get(t, "/login")
	forbidden(c, "0"+c.CSRF, "respelled")

	// A token lives an hour.
	c.Get(t, "/login")
	clock.Advance(time.Hour + time.Minute)
	forbidden(c, c.CSRF, "expired")
	c.Get(t, "/login")
	resp, body := c.Post(t, "/login", form(c.CSRF))
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, body)
	require.Len(t, sessionCookies(resp), 1)
}

// TestConsoleHostCookies is issue 29 finding 10: under an https base URL
// every console cookie is a __Host- cookie (Secure, Path=/, no Domain),
// and a bare-named session cookie is not taken; the console works over
// TLS with them. (Under http the names stay bare: TestConsoleSession.)
func TestConsoleHostCookies(t *testing.T) {
	t.Parallel()
	e := notifytest.StartDaemon(t)
	mux := http.NewServeMux()
	wo := e.Daemon.ConsoleOptions(nil)
	wo.BaseURL = "https://console.example"
	for pattern, h := range web.New(wo).Handlers() {
		mux.Handle(pattern, h)
	}
	srv := httptest.NewTLSServer(mux)
	t.Cleanup(srv.Close)
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	hc := srv.Client()
	hc.Jar = jar
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	c := &notifytest.Console{URL: srv.URL, HTTP: hc}
	hostCookie := func(resp *http.Response, name string) *http.Cookie {
		t.Helper()
		require.Nil(t, cookieNamed(resp, name), "no bare %s", name)
		ck := cookieNamed(resp, "__Host-"+name)
		require.NotNil(t, ck, name)
		require.True(t, ck.Secure, name)
		require.True(t, ck.HttpOnly, name)
		require.Equal(t, "/", ck.Path, name)
		require.Empty(t, ck.Domain, name)
		require.Equal(t, http.SameSiteStrictMode, ck.SameSite, name)
		return ck
	}

	resp, _ := c.Get(t, "/login")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	hostCookie(resp, "notifyd_login")
	resp, body := c.Post(t, "/login", url.Values{"email": {e.Email}, "password": {e.Password}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, body)
	session := hostCookie(resp, "notifyd_session")
	resp, body = c.Get(t, "/")
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	require.Contains(t, body, `id="logout"`)

	// The same token under the bare name is not a session here.
	req, err := http.NewRequest("GET", srv.URL+"/", nil)
	require.NoError(t, err)
	req.AddCookie(&http.Cookie{Name: "notifyd_session", Value: session.Value})
	bare, err := (&http.Client{Transport: hc.Transport, CheckRedirect: hc.CheckRedirect}).Do(req)
	require.NoError(t, err)
	_ = bare.Body.Close()
	require.Equal(t, http.StatusSeeOther, bare.StatusCode)
	require.Equal(t, "/login", bare.Header.Get("Location"))

	// Logout clears the __Host- session and leaves a __Host- flash.
	resp, _ = c.Post(t, "/logout", nil)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Empty(t, hostCookie(resp, "notifyd_session").Value)
	hostCookie(resp, "notifyd_flash")
	resp, _ = c.Get(t, "/")
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, "logged out")
}

// TestConsoleStaticFilesOnly is issue 29 finding 10: /static/ serves its
// files, and its directory is 404, not a listing.
func TestConsoleStaticFilesOnly(t *testing.T) {
	t.Parallel()
	e := notifytest.StartDaemon(t)
	c := e.NewConsole(t)
	resp, body := c.Get(t, "/static/console.css")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.NotEmpty(t, body)
	resp, body = c.Get(t, "/static/")
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	require.NotContains(t, body, "console.js")
}
