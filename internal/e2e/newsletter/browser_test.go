package newsletter_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notifytest"
)

var campHrefRE = regexp.MustCompile(`href="([^"]+)"`)

// TestCampaignUnsubscribeInBrowser sends a campaign, catches the mail in
// the simulator, follows its unsubscribe link in headless Chromium,
// confirms, and checks through the API that the subscriber is
// unsubscribed and no longer in the audience.
func TestCampaignUnsubscribeInBrowser(t *testing.T) {
	t.Parallel()
	env := notifytest.StartDaemon(t)
	campEmailRoute(t, env)
	browser := notifytest.StartChromium(t)
	x := subCreate(t, env.Owner, map[string]any{"channel": "email", "address": "reader@example.com", "name": "Reader"})
	subCreate(t, env.Owner, map[string]any{"channel": "email", "address": "other@example.com"})

	c := campCreate(t, env.Owner, map[string]any{"name": "Weekly", "channel": "email", "subject": "This week",
		"contentText": "News", "contentHtml": "<p>News</p>"})
	campSendIt(t, env.Owner, c.ID, nil)
	campWait(t, env.Owner, c.ID, 20*time.Second, func(x campJSON) bool { return x.Status == "sent" })

	// The mail as the vendor received it, fetched through the simulator's
	// control API like an outside observer.
	ms := env.Sim.Messages(campMailKind, "reader@example.com", 1)
	require.Len(t, ms, 1)
	h := campHrefRE.FindStringSubmatch(ms[0].HTML)
	require.NotNil(t, h, ms[0].HTML)
	link, err := url.Parse(h[1])
	require.NoError(t, err)
	require.Equal(t, "/v1/newsletter/unsubscribe", link.Path)
	require.Contains(t, ms[0].Text, link.String(), "text and HTML carry the same link")
	// The mail links to NOTIFYD_BASE_URL; open the same path and query on
	// the daemon's own address.
	pageURL := env.Daemon.URL() + link.RequestURI()

	var title, button, body string
	browser.Run(t,
		chromedp.Navigate(pageURL),
		chromedp.WaitVisible(`form button[type=submit]`, chromedp.ByQuery),
		chromedp.Text(`h1`, &title, chromedp.ByQuery),
		chromedp.Text(`form button[type=submit]`, &button, chromedp.ByQuery),
		chromedp.Text(`body`, &body, chromedp.ByQuery),
	)
	require.Equal(t, "Unsubscribe", title)
	require.Equal(t, "Unsubscribe", button)
	require.Contains(t, body, "re****@example.com", "the page names the masked address")
	require.Equal(t, "subscribed", subGet(t, env.Owner, x.ID).ConsentStatus, "opening the link (GET) changes nothing")

	browser.Run(t, chromedp.Click(`form button[type=submit]`, chromedp.ByQuery))
	browser.WaitText(t, "h1", "Unsubscribed")
	browser.Run(t, chromedp.Text(`body`, &body, chromedp.ByQuery))
	require.Contains(t, body, "will receive no more newsletters")

	s := subGet(t, env.Owner, x.ID)
	require.Equal(t, "unsubscribed", s.ConsentStatus)
	require.NotNil(t, s.UnsubscribedAt)
	r := subDo(t, env.Owner, "GET", "/v1/newsletter/campaigns/"+c.ID+"/audience", nil, http.StatusOK)
	require.True(t, strings.Contains(string(r.Body), `"audienceSize":1`), string(r.Body))

	// Reloading the link shows the done page.
	browser.Run(t, chromedp.Navigate(pageURL), chromedp.Text(`h1`, &title, chromedp.ByQuery))
	require.Equal(t, "Unsubscribed", title)
}
