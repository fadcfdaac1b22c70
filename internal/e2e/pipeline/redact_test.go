package pipeline_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notifytest"
)

// TestWebhookURLRedacted (issue 17, finding 7): a chat webhook URL of a
// form other than Slack's or Discord's (here a self-hosted chat server)
// is the credential in its path and query; neither appears in a
// test-send's detail, in an attempt's failureMessage or in its recorded
// request URL, whether the call failed in transport or the receiver
// echoed the URL in its answer.
func TestWebhookURLRedacted(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const pathSecret, querySecret = "hookpathsecret", "querysecret"

	// Nothing listens on port 1: a transport error, which quotes the URL.
	down := b.env.SimProvider(t, "chata_webhook", "down", map[string]string{
		"chata_webhook_url": "http://127.0.0.1:1/hooks/" + pathSecret + "?token=" + querySecret})
	p := notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, "POST", "/v1/providers/"+down+"/test-send", map[string]any{"mode": "test",
		"content": map[string]any{"text": "x"}}), http.StatusBadGateway, "SVC-50200")
	require.Contains(t, p.Detail, "http://127.0.0.1:1/…", "the host stays, for diagnosis")
	requireNoSecret(t, p.Detail, pathSecret, querySecret)

	// A receiver that fails and echoes what it was asked for.
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, "cannot handle "+r.URL.RequestURI()+" ("+r.URL.Path+", "+r.URL.RawQuery+")")
	}))
	t.Cleanup(echo.Close)
	failing := b.env.SimProvider(t, "chatb_webhook", "echo", map[string]string{
		"chatb_webhook_url": echo.URL + "/custom/" + pathSecret + "?token=" + querySecret})
	p = notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, "POST", "/v1/providers/"+failing+"/test-send", map[string]any{"mode": "test",
		"content": map[string]any{"text": "x"}}), http.StatusBadGateway, "SVC-50200")
	requireNoSecret(t, p.Detail, pathSecret, querySecret)

	// The same through the queue: the attempts' failureMessage.
	notifytest.PutRoutes(t, b.env.Owner, notifytest.Route{Channel: "chata_webhook", ProviderAccountID: down, Priority: 1},
		notifytest.Route{Channel: "chatb_webhook", ProviderAccountID: failing, Priority: 1})
	for _, ch := range []string{"chata_webhook", "chatb_webhook"} {
		notifytest.Send(t, b.key, map[string]any{"channel": ch, "recipient": map[string]any{"address": "label"}, "content": map[string]any{"text": "x"}})
	}
	var got []struct {
		FailureMessage *string `json:"failureMessage"`
		Request        struct {
			ProviderCall struct {
				URL string `json:"url"`
			} `json:"providerCall"`
		} `json:"request"`
	}
	require.Eventually(t, func() bool {
		r := notifytest.Dash(t, b.env.Owner, "GET", "/v1/attempts", nil)
		var out struct {
			Attempts json.RawMessage `json:"attempts"`
		}
		require.NoError(t, r.Decode(&out))
		require.NoError(t, json.Unmarshal(out.Attempts, &got))
		return len(got) >= 4 // two test-sends, one try of each send
	}, 15*time.Second, 50*time.Millisecond)
	for _, a := range got {
		require.NotNil(t, a.FailureMessage)
		requireNoSecret(t, *a.FailureMessage, pathSecret, querySecret)
		require.NotEmpty(t, a.Request.ProviderCall.URL)
		requireNoSecret(t, a.Request.ProviderCall.URL, pathSecret, querySecret)
	}
}

func requireNoSecret(t *testing.T, s string, secrets ...string) {
	t.Helper()
	for _, secret := range secrets {
		require.False(t, strings.Contains(s, secret), "%q shows %q", s, secret)
	}
}
