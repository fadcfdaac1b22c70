// Package engagement_test drives e-mail engagement (issue 35, items 4
// and 5) end to end against the provider simulator: opt-in tracking that
// rewrites links and adds a pixel to what the vendor receives, the click
// redirect (only to the message's own URL), opens and clicks in lookups,
// events and campaign statistics, scanner hits, and the global switch.
package engagement_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/config"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/notifytest"
	"github.com/notifyd/notifyd/internal/simulator"
)

var ctx = context.Background()

const (
	mailKind = "mailx_email"
	browser  = "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15"
)

// resendSecret is the Resend webhook signing secret of the route.
var resendSecret = "whsec_" + base64.StdEncoding.EncodeToString([]byte("resend webhook secret, 32 bytes!"))

type bundle struct {
	env   *notifytest.Env
	clock *notifytest.Clock
	key   *client.Client
	cbURL string
}

// setup starts a daemon on a test clock (a test moves it past the
// scanner window) whose email route is the simulator's Resend, with its
// delivery callback secret.
func setup(t *testing.T, opts ...notifytest.Option) *bundle {
	t.Helper()
	clock := &notifytest.Clock{}
	env := notifytest.StartDaemonAt(t, clock.Now, opts...)
	cfg := env.MailConfig(mailKind, "news@example.com")
	cfg["mailx_webhook_secret"] = resendSecret
	pid := notifytest.RegisterRoute(t, env.Owner, "email", mailKind, cfg)
	b := &bundle{env: env, clock: clock, key: env.SendKey(t)}
	var sec struct {
		Secret string `json:"secret"`
	}
	require.NoError(t, notifytest.DashboardCall(t, env.Owner, "POST", "/v1/providers/"+pid+"/callback-secret/rotate", nil, http.StatusOK).Decode(&sec))
	b.cbURL = env.Daemon.URL() + "/v1/callbacks/" + pid + "?token=" + url.QueryEscape(sec.Secret)
	return b
}

func trackingOff(c *config.Config) { c.TrackingOff = true }

// track sets the workspace's tracking.
func (b *bundle) track(t *testing.T, opens, clicks bool) {
	t.Helper()
	notifytest.DashboardCall(t, b.env.Owner, "PUT", "/v1/tracking/workspace", map[string]any{"opens": opens, "clicks": clicks}, http.StatusOK)
}

// webhook registers an endpoint for the engagement events.
func (b *bundle) webhook(t *testing.T) *notifytest.Receiver {
	t.Helper()
	rc := notifytest.NewReceiver(t, nil)
	notifytest.DashboardCall(t, b.env.Owner, "POST", "/v1/webhooks", map[string]any{"url": rc.URL,
		"events": []string{notify.EventOpened, notify.EventClicked}}, http.StatusCreated)
	return rc
}

// sendHTML sends an e-mail with an HTML part and waits until it is sent.
func (b *bundle) sendHTML(t *testing.T, to, text, html string) string {
	t.Helper()
	body := notifytest.Email(to, "Hello", text)
	body["content"].(map[string]any)["html"] = html
	out := notifytest.Send(t, b.key, body)
	require.Equal(t, "sent", notifytest.Wait(t, b.key, out.RequestID).Status)
	return out.RequestID
}

// mail is the one message the simulator received for to.
func (b *bundle) mail(t *testing.T, to string) simulator.Message {
	t.Helper()
	ms := b.env.Sim.Messages(mailKind, to, 0)
	require.Len(t, ms, 1, "mails to %s", to)
	return ms[0]
}

var (
	clickRe = regexp.MustCompile(`href="([^"]*/t/c/[^"]+)"`)
	pixelRe = regexp.MustCompile(`<img src="([^"]*/t/o/[^"]+)"`)
)

// links are the tracked links and the pixel of a received HTML part.
func links(html string) (clicks []string, pixel string) {
	for _, m := range clickRe.FindAllStringSubmatch(html, -1) {
		clicks = append(clicks, m[1])
	}
	if m := pixelRe.FindStringSubmatch(html); m != nil {
		pixel = m[1]
	}
	return clicks, pixel
}

// noRedirect is a client that shows redirects rather than follow them.
var noRedirect = &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error {
	return http.ErrUseLastResponse
}}

// hit fetches a tracked link or pixel as a user agent would.
func hit(t *testing.T, method, u, agent string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	require.NoError(t, err)
	req.Header.Set("User-Agent", agent)
	res, err := noRedirect.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	var sb strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := res.Body.Read(buf)
		sb.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return res, sb.String()
}

// engagementOf is a lookup's engagement field.
type engagementOf struct {
	Opens               int     `json:"opens"`
	Clicks              int     `json:"clicks"`
	FirstOpenedAt       *string `json:"firstOpenedAt"`
	FirstClickedAt      *string `json:"firstClickedAt"`
	LikelyScannerOpens  int     `json:"likelyScannerOpens"`
	LikelyScannerClicks int     `json:"likelyScannerClicks"`
}

// engagement looks the request up with the API key (Notification API)
// and answers its engagement (nil when null).
func (b *bundle) engagement(t *testing.T, id string) *engagementOf {
	t.Helper()
	var out struct {
		Engagement *engagementOf `json:"engagement"`
	}
	r := notifytest.Signed(t, b.key, "GET", "/v1/notifications/"+id, nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	require.NoError(t, r.Data(&out))
	return out.Engagement
}

// waitEngagement polls the lookup until cond holds.
func (b *bundle) waitEngagement(t *testing.T, id string, cond func(*engagementOf) bool) *engagementOf {
	t.Helper()
	deadline := time.Now().Add(notifytest.WaitTimeout)
	for {
		e := b.engagement(t, id)
		if e != nil && cond(e) {
			return e
		}
		require.True(t, time.Now().Before(deadline), "engagement of %s: last %+v", id, e)
		time.Sleep(30 * time.Millisecond)
	}
}

// events counts the webhook events of typ for request id, and answers the
// last one's data as sent.
func events(rc *notifytest.Receiver, id, typ string) (int, map[string]any) {
	n := 0
	var last map[string]any
	for _, r := range rc.Requests() {
		var ev struct {
			Type string         `json:"type"`
			Data map[string]any `json:"data"`
		}
		if json.Unmarshal(r.Body, &ev) != nil || ev.Type != typ || ev.Data["requestId"] != id {
			continue
		}
		n++
		last = ev.Data
	}
	return n, last
}
