package optin_test

import (
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notifytest"
)

// TestOptInConfirmInBrowser follows the mailed confirmation link in
// headless Chromium: the page (under its Content-Security-Policy) shows
// the button, opening it changes nothing, and pressing it confirms.
func TestOptInConfirmInBrowser(t *testing.T) {
	t.Parallel()
	env := notifytest.StartDaemon(t)
	emailRoute(t, env, env.Owner)
	setOptIn(t, env.Owner, true)
	browser := notifytest.StartChromium(t)
	x := create(t, env.Owner, map[string]any{"channel": "email", "address": "browser@example.com"})
	path, _ := confirmLink(t, waitMails(t, env, "browser@example.com", 1)[0])

	var title, button, body string
	browser.Run(t,
		chromedp.Navigate(env.Daemon.URL()+path),
		chromedp.WaitVisible(`form button[type=submit]`, chromedp.ByQuery),
		chromedp.Text(`h1`, &title, chromedp.ByQuery),
		chromedp.Text(`form button[type=submit]`, &button, chromedp.ByQuery),
		chromedp.Text(`body`, &body, chromedp.ByQuery),
	)
	require.Equal(t, "Confirm your subscription", title)
	require.Equal(t, "Confirm subscription", button)
	require.Contains(t, body, "br*****@example.com")
	require.Equal(t, "pending", get(t, env.Owner, x.ID).ConsentStatus, "opening the link (GET) changes nothing")

	browser.Run(t, chromedp.Click(`form button[type=submit]`, chromedp.ByQuery))
	browser.WaitText(t, "h1", "Subscription confirmed")
	got := get(t, env.Owner, x.ID)
	require.Equal(t, "subscribed", got.ConsentStatus)
	require.NotNil(t, got.ConsentedAt)
}
