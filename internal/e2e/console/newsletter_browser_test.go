package console_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notifytest"
)

// TestNewsletterInBrowser walks the newsletter journey in headless
// Chromium: log in, import subscribers from a CSV file and see the
// counts, create a campaign with an audience and see its count, send it
// and watch its page (polled by static/campaign.js) reach sent with the
// delivery stats.
func TestNewsletterInBrowser(t *testing.T) {
	t.Parallel()
	env := newsletterEnv(t)
	csvPath := filepath.Join(t.TempDir(), "subscribers.csv")
	require.NoError(t, os.WriteFile(csvPath, []byte("email,name,plan\n"+
		"ann@example.com,Ann,pro\nbob@example.com,Bob,pro\ncid@example.com,Cid,free\nnot-an-address,Nobody,pro\n"), 0o644))
	b := notifytest.StartChromium(t)
	base := env.Daemon.URL()
	b.Run(t, chromedp.EmulateViewport(1200, 900))
	notifytest.ConsoleLoginInBrowser(t, b, base, env.Email, env.Password)

	b.Run(t, chromedp.Click(`a[href="/newsletter"]`, chromedp.ByQuery))
	b.WaitText(t, "h1", "Campaigns")
	b.Run(t, chromedp.Click(`a[href="/newsletter/subscribers"]`, chromedp.ByQuery))
	b.WaitText(t, "h1", "Subscribers")
	b.Run(t, chromedp.SetUploadFiles("#i-file", []string{csvPath}, chromedp.ByID))
	b.Run(t, chromedp.Click("#import", chromedp.ByID))
	b.WaitText(t, "#import-total", "4")
	b.WaitText(t, "#import-created", "3")
	b.WaitText(t, "#import-skipped", "1")

	b.Run(t, chromedp.Navigate(base+"/newsletter"))
	b.Run(t, chromedp.WaitVisible("#create-form", chromedp.ByID))
	b.Run(t, chromedp.SendKeys("#c-name", "Spring news", chromedp.ByID),
		chromedp.SendKeys("#c-subject", "Spring is here", chromedp.ByID),
		chromedp.SendKeys("#c-text", "Hello from notifyd.", chromedp.ByID),
		chromedp.SendKeys("#c-audience", "plan=pro", chromedp.ByID))
	b.Run(t, chromedp.Click("#create", chromedp.ByID))
	b.WaitText(t, "#campaign-name", "Spring news")
	b.WaitText(t, "#status", "draft")
	b.WaitText(t, "#audience-size", "2")

	// The confirm dialog of console.js is accepted for this test.
	b.Run(t, chromedp.Evaluate(`window.confirm = () => true`, nil), chromedp.Click("#send", chromedp.ByID))
	// The page polls its progress and reloads as the status moves on.
	deadline := time.Now().Add(60 * time.Second)
	var status string
	for time.Now().Before(deadline) && status != "sent" {
		_ = b.Try(chromedp.Text("#status", &status, chromedp.ByID, chromedp.NodeVisible))
		time.Sleep(200 * time.Millisecond)
	}
	require.Equal(t, "sent", status, "the campaign page reaches sent")
	b.WaitText(t, "#stat-sent", "2")
	b.WaitText(t, "#total-recipients", "2")
	require.Len(t, env.Sim.Messages(mailKind, "bob@example.com", 0), 1)
	screenshot(t, b, "campaign")
}
