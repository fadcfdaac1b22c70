package console_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/notifytest"
)

// EnvScreenshots set to 1 makes the browser tests write the console's
// screenshots to docs/screenshots/ (off by default: runs leave the tree
// clean).
const EnvScreenshots = "NOTIFYD_SCREENSHOTS"

// screenshot saves the tab's viewport as docs/screenshots/name.png when
// NOTIFYD_SCREENSHOTS=1.
func screenshot(t *testing.T, b *notifytest.Browser, name string) {
	t.Helper()
	if os.Getenv(EnvScreenshots) != "1" {
		return
	}
	var png []byte
	b.Run(t, chromedp.FullScreenshot(&png, 100))
	dir := filepath.Join("..", "..", "..", "docs", "screenshots")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644))
}

// openMessage goes from the nav to Messages, clicks request id's row and
// waits for its page to show status.
func openMessage(t *testing.T, b *notifytest.Browser, id, status string) {
	t.Helper()
	b.Run(t, chromedp.Click(`a[href="/messages"]`, chromedp.ByQuery))
	b.WaitText(t, "h1", "Messages")
	b.Run(t, chromedp.Click(`tr[data-request-id="`+id+`"] a`, chromedp.ByQuery))
	b.WaitText(t, "#request-id", id)
	b.WaitText(t, "#status", status)
}

// TestConsoleInBrowser walks the main journey in headless Chromium: log
// in, see the overview, find a message sent through the API with its
// attempt in Messages, see user values as text, log out.
func TestConsoleInBrowser(t *testing.T) {
	t.Parallel()
	f := setup(t)
	const evil = `<script>document.title="pwned"</script>`
	id := f.send(t, "010-1234-5678", evil, "Your code is 123456", nil)
	f.waitStatus(t, id, notify.StatusSent)
	b := notifytest.StartChromium(t)
	base := f.env.Daemon.URL()
	b.Run(t, chromedp.EmulateViewport(1200, 900))

	notifytest.ConsoleLoginInBrowser(t, b, base, f.env.Email, f.env.Password)
	b.WaitText(t, "#who-role", "owner")
	screenshot(t, b, "overview")

	// Messages: the list links the request's page.
	openMessage(t, b, id, "sent")
	var provider, class, recipient, title string
	b.Run(t, chromedp.Text(".attempt-provider", &provider, chromedp.ByQuery),
		chromedp.Text(".attempt-class", &class, chromedp.ByQuery),
		chromedp.Text("#recipient", &recipient, chromedp.ByID),
		chromedp.Title(&title))
	require.Contains(t, provider, "vendorb_sms")
	require.Equal(t, "success", class)
	require.Contains(t, recipient, evil, "the name shows as text")
	require.False(t, strings.Contains(title, "pwned"), "no script ran")
	// The raw exchange opens with the keyboard-reachable summary.
	var raw string
	b.Run(t, chromedp.Click("details summary", chromedp.ByQuery), chromedp.Text(".raw-request", &raw, chromedp.ByQuery, chromedp.NodeVisible))
	require.NotEmpty(t, raw)
	screenshot(t, b, "message")

	// Log out: back to the login page, and the console wants a login again.
	b.Run(t, chromedp.Click("#logout", chromedp.ByID))
	b.WaitText(t, "h1", "Log in to notifyd")
	b.Run(t, chromedp.Navigate(base+"/messages"))
	b.WaitText(t, "h1", "Log in to notifyd")
}

// TestConsoleViewerInBrowser: a viewer sees a queued request without a
// cancel button; an operator sees it and cancels it.
func TestConsoleViewerInBrowser(t *testing.T) {
	t.Parallel()
	f := setup(t)
	at := time.Now().Add(time.Hour)
	id := f.send(t, "010-1234-5678", "", "later", &at)
	email, password := f.env.AddMember(t, "viewer")
	b := notifytest.StartChromium(t)
	base := f.env.Daemon.URL()
	notifytest.ConsoleLoginInBrowser(t, b, base, email, password)
	b.Run(t, chromedp.Navigate(base+"/messages/"+id))
	b.WaitText(t, "#status", "queued")
	var n int
	b.Run(t, chromedp.Evaluate(`document.querySelectorAll("#cancel").length`, &n))
	require.Equal(t, 0, n, "a viewer sees no cancel button")
	b.Run(t, chromedp.Click("#logout", chromedp.ByID))
	b.WaitText(t, "h1", "Log in to notifyd")

	email, password = f.env.AddMember(t, "operator")
	notifytest.ConsoleLoginInBrowser(t, b, base, email, password)
	b.Run(t, chromedp.Navigate(base+"/messages/"+id))
	b.WaitText(t, "#status", "queued")
	// The confirm dialog of console.js is accepted for this test.
	b.Run(t, chromedp.Evaluate(`window.confirm = () => true`, nil), chromedp.Click("#cancel", chromedp.ByID))
	b.WaitText(t, "#status", "canceled")
}
