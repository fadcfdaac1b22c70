package notifytest

import (
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// Console is a browser-less web console session for tests: an HTTP client
// with a cookie jar that does not follow redirects, and the CSRF token of
// the last page it read.
type Console struct {
	URL  string
	HTTP *http.Client
	// CSRF is the token of the last page read (hidden field "csrf").
	CSRF string
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]*)"`)

// NewConsole is a console client of the daemon, not logged in.
func (e *Env) NewConsole(t testing.TB) *Console {
	t.Helper()
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	return &Console{URL: e.Daemon.URL(), HTTP: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// ConsoleLogin logs email in through the console's login form and answers
// the session, its CSRF token read from the overview.
func (e *Env) ConsoleLogin(t testing.TB, email, password string) *Console {
	t.Helper()
	c := e.NewConsole(t)
	c.Get(t, "/login")
	resp, body := c.Post(t, "/login", url.Values{"email": {email}, "password": {password}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, body)
	resp, body = c.Get(t, "/")
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	return c
}

// ConsoleMember adds a member of role and logs them in to the console.
func (e *Env) ConsoleMember(t testing.TB, role string) *Console {
	t.Helper()
	email, password := e.AddMember(t, role)
	return e.ConsoleLogin(t, email, password)
}

// Get reads path and answers the response and its body; the page's CSRF
// token, if any, becomes c.CSRF.
func (c *Console) Get(t testing.TB, path string) (*http.Response, string) {
	t.Helper()
	return c.do(t, "GET", path, nil)
}

// Post submits form to path with c.CSRF in the field csrf, unless form
// sets csrf itself (an empty value sends none).
func (c *Console) Post(t testing.TB, path string, form url.Values) (*http.Response, string) {
	t.Helper()
	if form == nil {
		form = url.Values{}
	}
	if _, ok := form["csrf"]; !ok {
		form.Set("csrf", c.CSRF)
	} else if form.Get("csrf") == "" {
		form.Del("csrf")
	}
	return c.do(t, "POST", path, strings.NewReader(form.Encode()))
}

func (c *Console) do(t testing.TB, method, path string, body io.Reader) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, c.URL+path, body)
	require.NoError(t, err)
	if body != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := c.HTTP.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	if m := csrfRE.FindSubmatch(b); m != nil {
		c.CSRF = html.UnescapeString(string(m[1]))
	}
	return resp, string(b)
}

// ConsoleLoginInBrowser logs email in through the login page in b and
// waits for the overview.
func ConsoleLoginInBrowser(t testing.TB, b *Browser, baseURL, email, password string) {
	t.Helper()
	// One Run per step: each gets the browser's whole timeout on a
	// loaded machine.
	b.Run(t, chromedp.Navigate(baseURL+"/login"))
	b.Run(t, chromedp.WaitVisible("#email", chromedp.ByID))
	b.Run(t, chromedp.SendKeys("#email", email, chromedp.ByID))
	b.Run(t, chromedp.SendKeys("#password", password, chromedp.ByID))
	b.Run(t, chromedp.Click("#login", chromedp.ByID))
	b.WaitText(t, "h1", "Overview")
}
