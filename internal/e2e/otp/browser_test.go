package otp_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notifytest"
	"github.com/notifyd/notifyd/internal/simulator"
)

// emailRoute registers a mailx_email provider on the simulator and routes
// email to it.
func (b *bundle) emailRoute(t *testing.T) {
	t.Helper()
	mail := b.env.SimProvider(t, "mailx_email", "mail", map[string]string{"mailx_from_email": "noreply@example.com"})
	notifytest.PutRoutes(t, b.env.Owner, notifytest.Route{Channel: "sms", ProviderAccountID: b.smsProvider, Priority: 1},
		notifytest.Route{Channel: "email", ProviderAccountID: mail, Priority: 1})
}

// simMail fetches the newest mail to addr through the simulator's control
// API, as an outside observer would.
func (b *bundle) simMail(t *testing.T, addr string) simulator.Message {
	t.Helper()
	resp, err := http.Get(b.env.SimURL + "/_sim/messages?kind=mailx_email&limit=1&to=" + url.QueryEscape(addr))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var out struct {
		Messages []simulator.Message `json:"messages"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	require.Len(t, out.Messages, 1)
	return out.Messages[0]
}

var hrefRE = regexp.MustCompile(`href="([^"]+)"`)

// TestLinkInBrowser follows a link-mode email in headless Chromium: the
// landing page (a GET) changes nothing, the button completes verification,
// and the customer backend sees it through the status lookup.
func TestLinkInBrowser(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.emailRoute(t)
	browser := notifytest.StartChromium(t)

	s := b.send(t, map[string]any{"channel": "email", "to": " Browser.User@Example.com ", "mode": "link", "brandName": "Acme"})
	m := b.simMail(t, "browser.user@example.com")
	require.Equal(t, "[Acme] Verification", m.Subject)
	require.Contains(t, m.Text, "/v1/otp/link/")
	require.Contains(t, m.Text, "3 minutes")
	h := hrefRE.FindStringSubmatch(m.HTML)
	require.NotNil(t, h, m.HTML)
	link, err := url.Parse(h[1])
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(link.Path, "/v1/otp/link/"), link.String())
	require.Contains(t, m.Text, link.String(), "text and HTML carry the same link")
	// The mail links to NOTIFYD_BASE_URL; the test daemon listens on a
	// random port, so open the same path there.
	pageURL := b.env.Daemon.URL() + link.Path

	var title, button string
	browser.Run(t,
		chromedp.Navigate(pageURL),
		chromedp.WaitVisible(`form button[type=submit]`, chromedp.ByQuery),
		chromedp.Text(`h1`, &title, chromedp.ByQuery),
		chromedp.Text(`form button[type=submit]`, &button, chromedp.ByQuery),
	)
	require.Equal(t, "Confirm verification", title)
	require.Equal(t, "Complete verification", button)
	g := b.get(t, s.VerificationID)
	require.Equal(t, "pending", g.Status, "opening the link (GET) changes nothing")
	require.Empty(t, g.VerificationToken)

	var body string
	browser.Run(t, chromedp.Click(`form button[type=submit]`, chromedp.ByQuery))
	browser.WaitText(t, "h1", "Verified")
	browser.Run(t, chromedp.Text(`body`, &body, chromedp.ByQuery))
	require.Contains(t, body, "Your verification is complete")
	require.NotContains(t, strings.ToLower(body), "token", "the browser never sees the verification token")

	// The customer backend polls the status lookup (documented pattern:
	// every 2 s over the TTL; faster here).
	deadline := time.Now().Add(5 * time.Second)
	for g = b.get(t, s.VerificationID); g.Status == "pending" && time.Now().Before(deadline); g = b.get(t, s.VerificationID) {
		time.Sleep(50 * time.Millisecond)
	}
	require.Equal(t, "verified", g.Status)
	require.NotEmpty(t, g.VerificationToken)

	// Reloading the completed link (GET) shows the verified page.
	browser.Run(t,
		chromedp.Navigate(pageURL),
		chromedp.Text(`h1`, &title, chromedp.ByQuery),
	)
	require.Equal(t, "Verified", title)
}
