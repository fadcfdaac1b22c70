package engagement_test

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/notifytest"
	"github.com/notifyd/notifyd/internal/simulator"
)

const pageHTML = `<html><body><p>Hi! <a href="https://shop.example/sale?x=1&amp;y=2">Sale</a> ` +
	`<a href="mailto:help@shop.example">Write to us</a> <a href="https://shop.example/about">About</a></p></body></html>`

// With tracking on, what the vendor receives has its http(s) links
// rewritten and a pixel; a click lands on the link's original URL and is
// counted, the first open and click fire one event each; a forged or
// altered token and a URL that was not in the message are refused with
// an HTML page, and count nothing.
func TestClickRedirectsToTheMessagesURL(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.track(t, true, true)
	rc := b.webhook(t)

	id := b.sendHTML(t, "reader@example.com", "Sale: https://shop.example/sale", pageHTML)
	m := b.mail(t, "reader@example.com")
	require.Equal(t, "Sale: https://shop.example/sale", m.Text, "the text part is never rewritten")
	require.Contains(t, m.HTML, `href="mailto:help@shop.example"`)
	require.NotContains(t, m.HTML, `href="https://shop.example`, "every http(s) link is rewritten")
	clicks, pixel := links(m.HTML)
	require.Len(t, clicks, 2)
	require.NotEmpty(t, pixel)
	for _, u := range append(clicks, pixel) {
		require.True(t, strings.HasPrefix(u, b.env.Daemon.URL()+"/t/"), u)
	}
	require.Nil(t, b.engagement(t, id), "nothing recorded yet")

	b.clock.Advance(time.Minute) // past the scanner window
	res, _ := hit(t, "GET", clicks[0], browser)
	require.Equal(t, http.StatusFound, res.StatusCode)
	require.Equal(t, "https://shop.example/sale?x=1&y=2", res.Header.Get("Location"))
	require.Equal(t, "no-referrer", res.Header.Get("Referrer-Policy"))
	res, _ = hit(t, "GET", clicks[1], browser)
	require.Equal(t, "https://shop.example/about", res.Header.Get("Location"))
	res, body := hit(t, "GET", pixel, browser)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "image/gif", res.Header.Get("Content-Type"))
	require.True(t, strings.HasPrefix(body, "GIF89a"))

	e := b.waitEngagement(t, id, func(e *engagementOf) bool { return e.Clicks == 2 && e.Opens == 1 })
	require.NotNil(t, e.FirstOpenedAt)
	require.NotNil(t, e.FirstClickedAt)
	require.Zero(t, e.LikelyScannerClicks)
	rc.AwaitEvent(t, id, notify.EventClicked)
	rc.AwaitEvent(t, id, notify.EventOpened)

	// Refused: a token altered anywhere, another URL under the token's
	// MAC, an open token on the click path, garbage.
	tok := clicks[0][strings.LastIndex(clicks[0], "/")+1:]
	raw, err := base64.RawURLEncoding.DecodeString(tok)
	require.NoError(t, err)
	i := strings.Index(string(raw), "https://shop.example/sale")
	require.Positive(t, i)
	evil := append(append(append([]byte{}, raw[:i]...), "https://evil.example/sale?x=1&y"...), raw[len(raw)-16:]...)
	flipped := []byte(tok)
	flipped[len(flipped)/2] ^= 1
	if flipped[len(flipped)/2] == '-' || flipped[len(flipped)/2] == '_' {
		flipped[len(flipped)/2] = 'Q'
	}
	base := b.env.Daemon.URL() + "/t/c/"
	for name, u := range map[string]string{
		"altered":      base + string(flipped),
		"other URL":    base + base64.RawURLEncoding.EncodeToString(evil),
		"open token":   base + pixel[strings.LastIndex(pixel, "/")+1:],
		"forged":       base + base64.RawURLEncoding.EncodeToString([]byte("\x01chttps://evil.example/0123456789abcdef")),
		"not a token!": base + "..%2F..%2Fetc",
	} {
		res, body := hit(t, "GET", u, browser)
		require.Equal(t, http.StatusNotFound, res.StatusCode, name)
		require.Empty(t, res.Header.Get("Location"), name)
		require.Contains(t, res.Header.Get("Content-Type"), "text/html", name)
		require.Contains(t, body, "Link invalid", name)
	}
	res, _ = hit(t, "GET", b.env.Daemon.URL()+"/t/o/"+tok, browser)
	require.Equal(t, http.StatusNotFound, res.StatusCode, "a click token is no pixel")

	// Another click counts; the events stay one each.
	res, _ = hit(t, "GET", clicks[0], browser)
	require.Equal(t, http.StatusFound, res.StatusCode)
	b.waitEngagement(t, id, func(e *engagementOf) bool { return e.Clicks == 3 })
	require.NoError(t, b.env.Daemon.Rooms.Engagement.Flush(ctx))
	time.Sleep(300 * time.Millisecond) // a second event would be written by now
	e = b.engagement(t, id)
	require.Equal(t, 3, e.Clicks, "the refused ones counted nothing")
	require.Equal(t, 1, e.Opens)
	n, data := events(rc, id, notify.EventClicked)
	require.Equal(t, 1, n)
	require.Equal(t, "https://shop.example/sale?x=1&y=2", data["engagement"].(map[string]any)["url"])
	require.NotEmpty(t, data["engagement"].(map[string]any)["at"])
	n, _ = events(rc, id, notify.EventOpened)
	require.Equal(t, 1, n)
}

// Tracking is opt-in: a workspace that did not turn it on sends its mail
// as written; and NOTIFYD_TRACKING=off turns it off whatever the settings.
func TestTrackingOffLeavesMailAlone(t *testing.T) {
	t.Parallel()
	t.Run("not opted in", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.sendHTML(t, "a@example.com", "text", pageHTML)
		require.Equal(t, pageHTML, b.mail(t, "a@example.com").HTML)
		// Opens only: a pixel, no link rewritten.
		b.track(t, true, false)
		b.sendHTML(t, "b@example.com", "text", pageHTML)
		h := b.mail(t, "b@example.com").HTML
		clicks, pixel := links(h)
		require.Empty(t, clicks)
		require.NotEmpty(t, pixel)
		require.Contains(t, h, `href="https://shop.example/sale?x=1&amp;y=2"`)
	})
	t.Run("switched off", func(t *testing.T) {
		t.Parallel()
		b := setup(t, trackingOff)
		b.track(t, true, true)
		var list struct {
			Enabled   bool `json:"enabled"`
			Workspace struct {
				Opens, Clicks *bool
			} `json:"workspace"`
		}
		require.NoError(t, notifytest.DashboardCall(t, b.env.Owner, "GET", "/v1/tracking", nil, http.StatusOK).Decode(&list))
		require.False(t, list.Enabled)
		require.True(t, *list.Workspace.Opens)
		b.sendHTML(t, "c@example.com", "text", pageHTML)
		m := b.mail(t, "c@example.com")
		require.Equal(t, pageHTML, m.HTML, "no link rewritten, no pixel")
	})
}

// A click within seconds of the send, or from a known scanner's agent, is
// recorded as a likely scanner: not a person's click, no event.
func TestScannerHitsAreFlagged(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.track(t, true, true)
	rc := b.webhook(t)
	id := b.sendHTML(t, "scanned@example.com", "text", pageHTML)
	clicks, pixel := links(b.mail(t, "scanned@example.com").HTML)

	res, _ := hit(t, "GET", clicks[0], browser) // at once: a gateway fetching the links
	require.Equal(t, http.StatusFound, res.StatusCode, "a scanner is redirected too")
	hit(t, "GET", pixel, browser)
	b.clock.Advance(time.Minute)
	hit(t, "GET", clicks[1], "Mozilla/5.0 (compatible; Barracuda Sentinel (EE))")
	hit(t, "HEAD", clicks[1], browser)
	e := b.waitEngagement(t, id, func(e *engagementOf) bool { return e.LikelyScannerClicks == 3 && e.LikelyScannerOpens == 1 })
	require.Zero(t, e.Clicks)
	require.Zero(t, e.Opens)
	require.Nil(t, e.FirstClickedAt)
	require.Nil(t, e.FirstOpenedAt)
	time.Sleep(300 * time.Millisecond)
	n, _ := events(rc, id, notify.EventClicked)
	require.Zero(t, n, "no event for a scanner")

	hit(t, "GET", clicks[1], browser) // then the person
	e = b.waitEngagement(t, id, func(e *engagementOf) bool { return e.Clicks == 1 })
	require.Equal(t, 3, e.LikelyScannerClicks)
	rc.AwaitEvent(t, id, notify.EventClicked)
}

type statsJSON struct {
	CampaignID           string `json:"campaignId"`
	Sent                 int    `json:"sent"`
	Delivered            int    `json:"delivered"`
	Bounced              int    `json:"bounced"`
	Opened               int    `json:"opened"`
	Clicked              int    `json:"clicked"`
	LikelyScannerOpened  int    `json:"likelyScannerOpened"`
	LikelyScannerClicked int    `json:"likelyScannerClicked"`
	Rates                struct {
		Delivered, Bounced, Opened, Clicked, ClickToOpen float64
	} `json:"rates"`
	Tracking struct {
		Opens, Clicks bool
	} `json:"tracking"`
	Links []struct {
		URL                 string `json:"url"`
		Index               int    `json:"index"`
		Clicks              int    `json:"clicks"`
		LikelyScannerClicks int    `json:"likelyScannerClicks"`
	} `json:"links"`
}

// A campaign tracked by its own setting (the workspace's is off): its
// statistics match what the simulator received and what the readers did,
// its unsubscribe link is not rewritten, and another workspace sees none
// of it (404).
func TestCampaignStatistics(t *testing.T) {
	t.Parallel()
	b := setup(t)
	owner := b.env.Owner
	var subs []map[string]any
	for i := range 4 {
		subs = append(subs, map[string]any{"channel": "email", "address": fmt.Sprintf("reader%d@example.com", i)})
	}
	notifytest.DashboardCall(t, owner, "POST", "/v1/newsletter/subscribers/import", map[string]any{"subscribers": subs}, http.StatusOK)
	var c struct {
		ID string `json:"id"`
	}
	r := notifytest.DashboardCall(t, owner, "POST", "/v1/newsletter/campaigns", map[string]any{"name": "Spring", "channel": "email",
		"subject": "Spring sale", "contentText": "Sale", "contentHtml": pageHTML, "isAdvertisement": false, "includeUnsubscribe": true},
		http.StatusCreated)
	c = notifytest.Field[struct {
		ID string `json:"id"`
	}](t, r, "campaign")
	stats := func() statsJSON {
		return notifytest.Decode[statsJSON](t, notifytest.DashboardCall(t, owner, "GET", "/v1/newsletter/campaigns/"+c.ID+"/stats", nil,
			http.StatusOK), http.StatusOK)
	}
	require.False(t, stats().Tracking.Clicks)
	notifytest.DashboardCall(t, owner, "PUT", "/v1/tracking/campaigns/"+c.ID, map[string]any{"opens": true, "clicks": true}, http.StatusOK)
	require.True(t, stats().Tracking.Clicks)

	// Another workspace: 404 for the campaign's statistics and setting.
	other, _ := b.env.NewWorkspace(t, "Other", "other@example.com")
	notifytest.DashboardProblem(t, other, "GET", "/v1/newsletter/campaigns/"+c.ID+"/stats", nil, http.StatusNotFound)
	notifytest.DashboardProblem(t, other, "PUT", "/v1/tracking/campaigns/"+c.ID, map[string]any{"opens": false}, http.StatusNotFound)
	notifytest.DashboardProblem(t, other, "DELETE", "/v1/tracking/campaigns/"+c.ID, nil, http.StatusNotFound)

	notifytest.DashboardCall(t, owner, "POST", "/v1/newsletter/campaigns/"+c.ID+"/send", map[string]any{}, http.StatusOK)
	deadline := time.Now().Add(notifytest.WaitTimeout)
	for stats().Sent < 4 {
		require.True(t, time.Now().Before(deadline), "campaign not sent: %+v", stats())
		time.Sleep(50 * time.Millisecond)
	}
	ms := b.env.Sim.Messages(mailKind, "", 0)
	require.Len(t, ms, 4)
	mails := map[string][]string{}
	pixels := map[string]string{}
	for _, m := range ms {
		require.Regexp(t, `href="http://[^"]+/v1/newsletter/unsubscribe\?token=`, m.HTML, "the unsubscribe link is not rewritten")
		cl, px := links(m.HTML)
		require.Len(t, cl, 2, m.To)
		mails[m.To], pixels[m.To] = cl, px
	}

	// Delivery reports: three delivered, one bounced.
	for i, typ := range []string{"delivery", "delivery", "delivery", "bounce"} {
		res, err := b.env.Sim.PostCallback(ctx, simulator.CallbackRequest{Kind: mailKind, URL: b.cbURL, Type: typ,
			To: fmt.Sprintf("reader%d@example.com", i), Secret: resendSecret})
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, res.Status, res.Body)
	}
	b.clock.Advance(time.Minute)
	// reader0 clicks the sale twice, reader1 the about link, reader2 only
	// opens, reader3's gateway clicks the sale.
	hit(t, "GET", mails["reader0@example.com"][0], browser)
	hit(t, "GET", mails["reader0@example.com"][0], browser)
	hit(t, "GET", mails["reader1@example.com"][1], browser)
	hit(t, "GET", pixels["reader2@example.com"], browser)
	hit(t, "GET", mails["reader3@example.com"][0], "Mozilla/5.0 (compatible; proofpoint urldefense)")
	require.NoError(t, b.env.Daemon.Rooms.Engagement.Flush(ctx))
	var st statsJSON
	for {
		st = stats()
		if st.Delivered == 3 && st.Bounced == 1 && st.Clicked == 2 {
			break
		}
		require.True(t, time.Now().Before(deadline.Add(notifytest.WaitTimeout)), "stats: %+v", st)
		time.Sleep(50 * time.Millisecond)
	}
	require.Equal(t, c.ID, st.CampaignID)
	require.Equal(t, len(ms), st.Sent, "what the simulator received")
	require.Equal(t, 3, st.Opened, "a click is an open too")
	require.Equal(t, 0, st.LikelyScannerOpened)
	require.Equal(t, 1, st.LikelyScannerClicked)
	require.Equal(t, 0.75, st.Rates.Delivered)
	require.Equal(t, 0.25, st.Rates.Bounced)
	require.Equal(t, 0.75, st.Rates.Opened)
	require.Equal(t, 0.5, st.Rates.Clicked)
	require.Equal(t, 0.6667, st.Rates.ClickToOpen)
	require.Len(t, st.Links, 2)
	require.Equal(t, "https://shop.example/sale?x=1&y=2", st.Links[0].URL)
	require.Equal(t, 0, st.Links[0].Index)
	require.Equal(t, 2, st.Links[0].Clicks)
	require.Equal(t, 1, st.Links[0].LikelyScannerClicks)
	require.Equal(t, "https://shop.example/about", st.Links[1].URL)
	require.Equal(t, 1, st.Links[1].Clicks)

	// The console's campaign page shows the same figures.
	con := b.env.ConsoleLogin(t, b.env.Email, b.env.Password)
	res, page := con.Get(t, "/newsletter/campaigns/"+c.ID)
	require.Equal(t, http.StatusOK, res.StatusCode)
	for _, want := range []string{`id="stat-delivered">3<`, `id="stat-bounced">1<`, `id="stat-opened">3<`, `id="stat-clicked">2<`,
		"clicked (50.0%; 66.7% of opens)", "https://shop.example/sale?x=1&amp;y=2", "Only likely scanners: 0 opened, 1 clicked"} {
		require.Contains(t, page, want)
	}

	// The setting goes; the campaign inherits the workspace's (off).
	notifytest.DashboardCall(t, owner, "DELETE", "/v1/tracking/campaigns/"+c.ID, nil, http.StatusNoContent)
	require.False(t, stats().Tracking.Opens)
	notifytest.DashboardProblem(t, owner, "DELETE", "/v1/tracking/campaigns/"+c.ID, nil, http.StatusNotFound)
}

// The settings: roles, validation, unknown scopes.
func TestTrackingSettings(t *testing.T) {
	t.Parallel()
	b := setup(t)
	owner := b.env.Owner
	viewer := b.env.Member(t, "viewer")
	notifytest.DashboardCall(t, viewer, "GET", "/v1/tracking", nil, http.StatusOK)
	notifytest.DashboardProblem(t, viewer, "PUT", "/v1/tracking/workspace", map[string]any{"opens": true, "clicks": true}, http.StatusForbidden)
	notifytest.DashboardProblem(t, b.env.Member(t, "operator"), "PUT", "/v1/tracking/workspace",
		map[string]any{"opens": true, "clicks": true}, http.StatusForbidden)
	p := notifytest.DashboardProblem(t, owner, "PUT", "/v1/tracking/workspace", map[string]any{"opens": true}, http.StatusBadRequest)
	require.Equal(t, "opens and clicks are required booleans for the workspace", p.Detail)
	notifytest.DashboardProblem(t, owner, "PUT", "/v1/tracking/workspace", map[string]any{"opens": "yes", "clicks": true}, http.StatusBadRequest)
	notifytest.DashboardProblem(t, owner, "PUT", "/v1/tracking/categories/nope", map[string]any{"opens": true}, http.StatusNotFound)
	notifytest.DashboardProblem(t, owner, "PUT", "/v1/tracking/campaigns/not-a-uuid", map[string]any{"opens": true}, http.StatusNotFound)
	notifytest.DashboardProblem(t, owner, "GET", "/v1/newsletter/campaigns/not-a-uuid/stats", nil, http.StatusNotFound)
	notifytest.DashboardCall(t, owner, "POST", "/v1/categories", map[string]any{"key": "news", "name": "News"}, http.StatusCreated)
	notifytest.DashboardCall(t, owner, "PUT", "/v1/tracking/categories/news", map[string]any{"clicks": true}, http.StatusOK)
	var list struct {
		Enabled    bool             `json:"enabled"`
		Categories []map[string]any `json:"categories"`
	}
	require.NoError(t, notifytest.DashboardCall(t, owner, "GET", "/v1/tracking", nil, http.StatusOK).Decode(&list))
	require.True(t, list.Enabled)
	require.Len(t, list.Categories, 1)
	require.Equal(t, "news", list.Categories[0]["category"])
	require.Nil(t, list.Categories[0]["opens"], "inherits")
	require.Equal(t, true, list.Categories[0]["clicks"])
	require.NotEmpty(t, notifytest.Audit(t, owner, "tracking.put"))
}
