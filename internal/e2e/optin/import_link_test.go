package optin_test

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notifytest"
	"github.com/notifyd/notifyd/internal/simulator"
)

// anyLinkRE finds a confirmation link whatever it starts with (a link
// without a host too, which linkRE would not see).
var anyLinkRE = regexp.MustCompile(`\S*/v1/newsletter/confirm\?token=[A-Za-z0-9._%-]+`)

// mailShape is a confirmation mail with its link cut out: what two mails
// of one workspace must share.
type mailShape struct{ Subject, Text, HTML string }

// cutLink requires the mail's confirmation link to be absolute under the
// public base URL, in the text and the HTML alike, and returns the mail
// without it and the link.
func cutLink(t *testing.T, base string, m simulator.Message) (mailShape, string) {
	t.Helper()
	link := anyLinkRE.FindString(m.Text)
	require.NotEmpty(t, link, m.Text)
	require.True(t, strings.HasPrefix(link, base+"/v1/newsletter/confirm?token="),
		"the link %q must start with the public base URL %q", link, base)
	require.Contains(t, m.HTML, `href="`+html.EscapeString(link)+`"`)
	return mailShape{Subject: m.Subject, Text: strings.ReplaceAll(m.Text, link, "LINK"),
		HTML: strings.ReplaceAll(m.HTML, html.EscapeString(link), "LINK")}, link
}

// TestOptInConsoleImportLink (issue 29, finding 5): the confirmation mail
// of a subscriber imported through the console's CSV form carries the
// same absolute link (NOTIFYD_BASE_URL) as one imported through the API,
// the two mails are otherwise alike, and the console-imported subscriber
// confirms through it.
func TestOptInConsoleImportLink(t *testing.T) {
	t.Parallel()
	env := notifytest.StartDaemon(t)
	emailRoute(t, env, env.Owner)
	setOptIn(t, env.Owner, true)
	base := env.Daemon.Config.BaseURL
	require.True(t, strings.HasPrefix(base, "http://127.0.0.1:"), base)

	r := call(t, env.Owner, "POST", "/v1/newsletter/subscribers/import", map[string]any{"subscribers": []map[string]any{
		{"channel": "email", "address": "api@example.com", "name": "Ann"}}}, http.StatusOK)
	require.JSONEq(t, `{"total":1,"created":1,"updated":0,"skipped":0,"confirmationsSent":1}`, string(r.Body))

	c := env.ConsoleLogin(t, env.Email, env.Password)
	resp, body := c.PostFile(t, "/newsletter/subscribers/import", nil, "file", "list.csv", []byte("email,name\nconsole@example.com,Ann\n"))
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	require.Contains(t, body, `id="import-created">1<`)

	apiMail, _ := cutLink(t, base, waitMails(t, env, "api@example.com", 1)[0])
	consoleMail, link := cutLink(t, base, waitMails(t, env, "console@example.com", 1)[0])
	require.Equal(t, apiMail, consoleMail, "the two paths send the same mail")
	require.Contains(t, body, `id="import-confirmations">1<`, "the console shows the mails sent, as the API answers")

	u, err := url.Parse(link)
	require.NoError(t, err)
	htmlPage(t, confirmPost(t, env, u.Query().Get("token")), http.StatusOK, "Subscription confirmed")
	var out struct {
		Subscribers []subscriber `json:"subscribers"`
	}
	require.NoError(t, call(t, env.Owner, "GET", "/v1/newsletter/subscribers?search=console@example.com", nil, http.StatusOK).Decode(&out))
	require.Len(t, out.Subscribers, 1)
	require.Equal(t, "subscribed", out.Subscribers[0].ConsentStatus)
}
