package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notifytest"
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
