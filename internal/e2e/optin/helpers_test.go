// Package optin_test tests double opt-in (issue 21, item 5) end to end: the
// newsletter settings, pending subscribers and their confirmation mails at
// the simulator, the public confirmation page, imports and resend.
package optin_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/notifytest"
	"github.com/notifyd/notifyd/internal/simulator"
	"github.com/notifyd/notifyd/internal/store/sqlstore"
)

const mailKind = "mailx_email"

type subscriber struct {
	ID            string  `json:"id"`
	Address       string  `json:"address"`
	ConsentStatus string  `json:"consentStatus"`
	ConsentedAt   *string `json:"consentedAt"`
}

// call sends a dashboard request as c and requires the status.
func call(t *testing.T, c *client.Client, method, path string, body any, status int) *client.Response {
	t.Helper()
	return notifytest.DashboardCall(t, c, method, path, body, status)
}

// setOptIn turns double opt-in on or off as c.
func setOptIn(t *testing.T, c *client.Client, on bool) {
	t.Helper()
	r := call(t, c, "PATCH", "/v1/newsletter/settings", map[string]any{"doubleOptIn": on}, http.StatusOK)
	got := notifytest.Field[struct {
		DoubleOptIn bool    `json:"doubleOptIn"`
		UpdatedAt   *string `json:"updatedAt"`
	}](t, r, "settings")
	require.Equal(t, on, got.DoubleOptIn)
	require.NotNil(t, got.UpdatedAt)
}

func create(t *testing.T, c *client.Client, body map[string]any) subscriber {
	t.Helper()
	return notifytest.Field[subscriber](t, call(t, c, "POST", "/v1/newsletter/subscribers", body, http.StatusCreated), "subscriber")
}

func get(t *testing.T, c *client.Client, id string) subscriber {
	t.Helper()
	return notifytest.Field[subscriber](t, call(t, c, "GET", "/v1/newsletter/subscribers/"+id, nil, http.StatusOK), "subscriber")
}

// emailRoute routes the workspace's email to a simulated mailx account.
func emailRoute(t *testing.T, env *notifytest.Env, c *client.Client) {
	t.Helper()
	notifytest.RegisterRoute(t, c, "email", mailKind, env.MailConfig(mailKind, "news@example.com"))
}

// waitMails polls the simulator until address has n mails and returns them.
func waitMails(t *testing.T, env *notifytest.Env, address string, n int) []simulator.Message {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ms := env.Sim.Messages(mailKind, address, 0)
		if len(ms) >= n {
			require.Len(t, ms, n, "more mails than expected to %s", address)
			return ms
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d mails after 30 s, want %d", address, len(ms), n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

var linkRE = regexp.MustCompile(`https?://\S+/v1/newsletter/confirm\?token=[A-Za-z0-9._%-]+`)

// confirmLink parses the confirmation link of a mail (text and HTML carry
// the same one) and returns its path and query on the daemon's address
// (the mail links to NOTIFYD_BASE_URL) and its token.
func confirmLink(t *testing.T, m simulator.Message) (path, token string) {
	t.Helper()
	require.Equal(t, "Confirm your subscription", m.Subject)
	raw := linkRE.FindString(m.Text)
	require.NotEmpty(t, raw, m.Text)
	require.Contains(t, m.HTML, `href="`+raw+`"`)
	u, err := url.Parse(raw)
	require.NoError(t, err)
	require.Equal(t, "/v1/newsletter/confirm", u.Path)
	token = u.Query().Get("token")
	require.NotEmpty(t, token)
	return u.RequestURI(), token
}

type page = notifytest.Page

// public sends an unauthenticated request.
func public(t *testing.T, env *notifytest.Env, method, path, contentType string, body []byte) page {
	t.Helper()
	return notifytest.Public(t, env.Daemon.URL(), method, path, contentType, body)
}

// htmlPage requires a public HTML page of that status and title.
func htmlPage(t *testing.T, p page, status int, title string) {
	t.Helper()
	notifytest.RequireHTMLPage(t, p, status)
	require.Contains(t, p.Body, "<h1>"+title+"</h1>")
}

func confirmPost(t *testing.T, env *notifytest.Env, token string) page {
	t.Helper()
	return public(t, env, "POST", "/v1/newsletter/confirm", "application/x-www-form-urlencoded",
		[]byte(url.Values{"token": {token}}.Encode()))
}

func confirmGet(t *testing.T, env *notifytest.Env, token string) page {
	t.Helper()
	return public(t, env, "GET", "/v1/newsletter/confirm?token="+url.QueryEscape(token), "", nil)
}

// requestCount counts the workspace's notification requests of a source.
func requestCount(t *testing.T, env *notifytest.Env, ws, source string) int {
	t.Helper()
	ctx := context.Background()
	var n int
	require.NoError(t, env.Daemon.DB.View(ctx, func(tx notify.Tx) error {
		c := tx.(interface{ Conn() sqlstore.Conn }).Conn()
		return c.QueryRow(ctx, `SELECT count(*) FROM notification_requests WHERE workspace_id = ? AND source = ?`, ws, source).Scan(&n)
	}))
	return n
}

// auditCount counts the workspace's audit entries of action; actors
// lists their actorUserId (nil for the system).
func auditCount(t *testing.T, c *client.Client, action string) (n int, actors []*string) {
	t.Helper()
	logs := notifytest.Audit(t, c, action)
	for _, l := range logs {
		actors = append(actors, l.ActorUserID)
	}
	return len(logs), actors
}

// audienceSize is the campaign's audience preview count.
func audienceSize(t *testing.T, c *client.Client, campaignID string) int {
	t.Helper()
	var out struct {
		AudienceSize *int `json:"audienceSize"`
	}
	r := call(t, c, "GET", "/v1/newsletter/campaigns/"+campaignID+"/audience", nil, http.StatusOK)
	require.NoError(t, json.Unmarshal(r.Body, &out))
	require.NotNil(t, out.AudienceSize, string(r.Body))
	return *out.AudienceSize
}
