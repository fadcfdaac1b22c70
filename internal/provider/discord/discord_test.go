package discord

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider"
	"github.com/notifyd/notifyd/internal/provider/providertest"
)

const channelID = "1098765432101234567"

var msg = provider.Message{ID: "req-1", Channel: notify.ChannelChatBBot, To: channelID, Title: "Deploy", Text: "build 42 is live"}

func TestKinds(t *testing.T) {
	t.Parallel()
	w, b := WebhookKind(), BotKind()
	require.Equal(t, "chatb_webhook", w.ID)
	require.Equal(t, notify.ChannelChatBWebhook, w.Channel)
	require.Equal(t, []string{"chatb_webhook_url"}, w.Required)
	require.Equal(t, "chatb_bot", b.ID)
	require.Equal(t, notify.ChannelChatBBot, b.Channel)
	require.Equal(t, []string{"chatb_bot_token"}, b.Required)
	for _, k := range []provider.Kind{w, b} {
		require.Equal(t, provider.BatchDefaults{MaxSize: 1}, k.Batch)
	}
}

func TestMissingKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		kind provider.Kind
		cfg  provider.Config
	}{
		{WebhookKind(), provider.Config{}},
		{WebhookKind(), provider.Config{"chatb_webhook_url": "discord.com/api/webhooks/1/x"}},
		{BotKind(), provider.Config{}},
		{BotKind(), provider.Config{"chatb_bot_token": "t", "base_url": "ftp://discord.com"}},
	} {
		providertest.RequireInvalid(t, tc.kind, tc.cfg)
	}
}

func TestContent(t *testing.T) {
	t.Parallel()
	c, err := content(provider.Message{Title: "T", Text: "body"})
	require.Nil(t, err)
	require.Equal(t, "**T**\nbody", c)
	c, err = content(provider.Message{Text: "body"})
	require.Nil(t, err)
	require.Equal(t, "body", c)
	c, err = content(provider.Message{Text: strings.Repeat("가", maxContent)})
	require.Nil(t, err, "the limit counts characters, not bytes")
	require.Len(t, []rune(c), maxContent)
	for _, m := range []provider.Message{{}, {Text: " \n"}, {Text: strings.Repeat("a", maxContent+1)}, {Title: "T", Text: strings.Repeat("a", maxContent-5)}} {
		_, err = content(m)
		require.NotNil(t, err)
		require.Equal(t, notify.FailureInvalidRequest, err.Code)
	}
}

func TestWebhookURLGetsWait(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"https://discord.com/api/webhooks/1/tok":                   "https://discord.com/api/webhooks/1/tok?wait=true",
		"https://discord.com/api/webhooks/1/tok?thread_id=9":       "https://discord.com/api/webhooks/1/tok?thread_id=9&wait=true",
		"https://discord.com/api/webhooks/1/tok?wait=false":        "https://discord.com/api/webhooks/1/tok?wait=true",
		"https://discord.com/api/webhooks/1/tok?wait=true#frag":    "https://discord.com/api/webhooks/1/tok?wait=true",
		"https://discord.com/api/webhooks/1/tok?thread_id=9&wait=": "https://discord.com/api/webhooks/1/tok?thread_id=9&wait=true",
	} {
		p, err := WebhookKind().New(provider.Config{keyWebhookURL: in}, providertest.Deps())
		require.NoError(t, err)
		require.Equal(t, want, p.(*webhookProvider).url, in)
	}
}

func TestWebhookSuccess(t *testing.T) {
	t.Parallel()
	rec, srv := providertest.NewRecorder(t, http.StatusOK, `{"id":"1234567890123456789","channel_id":"42","content":"x"}`, nil)
	p := providertest.MustNew(t, WebhookKind(), provider.Config{"chatb_webhook_url": srv.URL + "/api/webhooks/111/secret-token?thread_id=5"})
	res := p.Send(context.Background(), []provider.Message{msg})
	require.Len(t, res, 1)
	require.Nil(t, res[0].Err)
	require.Equal(t, "1234567890123456789", res[0].MessageID)
	require.Equal(t, srv.URL+"/api/webhooks/…", res[0].Exchange.URL, "the secret path is redacted")
	require.Equal(t, payload{Content: "**Deploy**\nbuild 42 is live"}, res[0].Exchange.Request)
	reqs := rec.Requests()
	require.Len(t, reqs, 1)
	providertest.Golden(t, "webhook", []byte(reqs[0]))
}

func TestWebhook204(t *testing.T) {
	t.Parallel()
	_, srv := providertest.NewRecorder(t, http.StatusNoContent, "", nil)
	p := providertest.MustNew(t, WebhookKind(), provider.Config{"chatb_webhook_url": srv.URL})
	res := p.Send(context.Background(), []provider.Message{msg})
	require.Nil(t, res[0].Err)
	require.Empty(t, res[0].MessageID)
}

func TestBotSuccess(t *testing.T) {
	t.Parallel()
	rec, srv := providertest.NewRecorder(t, http.StatusOK, `{"id":"1234567890123456789","channel_id":"`+channelID+`"}`, nil)
	// base_url replaces scheme and host only; its path is ignored.
	p := providertest.MustNew(t, BotKind(), provider.Config{"chatb_bot_token": "bot-test-token", "base_url": srv.URL + "/ignored"})
	res := p.Send(context.Background(), []provider.Message{msg})
	require.Len(t, res, 1)
	require.Nil(t, res[0].Err)
	require.Equal(t, "1234567890123456789", res[0].MessageID)
	require.Equal(t, srv.URL+"/api/v10/channels/"+channelID+"/messages", res[0].Exchange.URL)
	logged, err := json.Marshal(res[0].Exchange.Request)
	require.NoError(t, err)
	require.NotContains(t, string(logged), "bot-test-token", "the token is never logged")
	reqs := rec.Requests()
	require.Len(t, reqs, 1)
	providertest.Golden(t, "bot", []byte(reqs[0]))
}

func TestBotSendsOneCallPerMessage(t *testing.T) {
	t.Parallel()
	rec, srv := providertest.NewRecorder(t, http.StatusOK, `{"id":"1"}`, nil)
	p := providertest.MustNew(t, BotKind(), provider.Config{"chatb_bot_token": "t", "base_url": srv.URL})
	msgs := []provider.Message{
		{To: channelID, Text: "a"},
		{To: "", Text: "b"},
		{To: "../../users/@me", Text: "c"},
		{To: channelID, Text: strings.Repeat("x", maxContent+1)},
		{To: channelID, Text: "e"},
	}
	res := p.Send(context.Background(), msgs)
	require.Len(t, res, 5)
	require.Nil(t, res[0].Err)
	for _, r := range res[1:4] {
		require.NotNil(t, r.Err)
		require.Equal(t, notify.FailureInvalidRequest, r.Err.Code)
		require.Nil(t, r.Exchange.Response, "no call was made")
	}
	require.Nil(t, res[4].Err)
	require.Len(t, rec.Requests(), 2)
}

type errorRow struct {
	name       string
	status     int
	body       string
	header     map[string]string
	want       notify.FailureCode
	retryAfter time.Duration
}

func discordError(code int, message string) string {
	b, _ := json.Marshal(map[string]any{"code": code, "message": message})
	return string(b)
}

const rateLimitBody = `{"message":"You are being rate limited.","retry_after":1.5,"global":false}`

func runErrorRows(t *testing.T, kind provider.Kind, cfg func(url string) provider.Config, rows []errorRow) {
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			t.Parallel()
			_, srv := providertest.NewRecorder(t, row.status, row.body, row.header)
			p := providertest.MustNew(t, kind, cfg(srv.URL))
			res := p.Send(context.Background(), []provider.Message{msg})
			require.NotNil(t, res[0].Err)
			require.Equal(t, row.want, res[0].Err.Code, res[0].Err.Message)
			require.Equal(t, row.retryAfter, res[0].Err.RetryAfter)
			require.Empty(t, res[0].MessageID)
			require.Equal(t, row.status, res[0].Exchange.Response.HTTPStatus)
		})
	}
}

func TestErrorMappingWebhook(t *testing.T) {
	t.Parallel()
	runErrorRows(t, WebhookKind(), func(u string) provider.Config { return provider.Config{"chatb_webhook_url": u} }, []errorRow{
		{name: "10015 unknown webhook", status: 404, body: discordError(10015, "Unknown Webhook"), want: notify.FailureInvalidRequest},
		{name: "50027 invalid token 401", status: 401, body: discordError(50027, "Invalid Webhook Token"), want: notify.FailureUnauthorized},
		{name: "50027 invalid token 400", status: 400, body: discordError(50027, "Invalid Webhook Token"), want: notify.FailureUnauthorized},
		{name: "50006 empty message", status: 400, body: discordError(50006, "Cannot send an empty message"), want: notify.FailureInvalidRequest},
		{name: "50035 invalid form body", status: 400, body: discordError(50035, "Invalid Form Body"), want: notify.FailureInvalidRequest},
		{name: "429 header", status: 429, body: rateLimitBody, header: map[string]string{"Retry-After": "2"}, want: notify.FailureRateLimited, retryAfter: 2 * time.Second},
		{name: "429 body only", status: 429, body: rateLimitBody, want: notify.FailureRateLimited, retryAfter: 1500 * time.Millisecond},
		{name: "500", status: 500, body: "", want: notify.FailureTemporaryUnavailable},
		{name: "502 html", status: 502, body: "<html>bad gateway</html>", want: notify.FailureTemporaryUnavailable},
		{name: "403", status: 403, body: discordError(50013, "Missing Permissions"), want: notify.FailureUnauthorized},
		{name: "unlisted code 4xx", status: 400, body: discordError(99999, "new"), want: notify.FailureInvalidRequest},
		{name: "404 not json", status: 404, body: "404 page not found", want: notify.FailureInvalidRequest},
		{name: "3xx not followed", status: 304, body: "", want: notify.FailureUnknown},
	})
}

func TestErrorMappingBot(t *testing.T) {
	t.Parallel()
	runErrorRows(t, BotKind(), func(u string) provider.Config { return provider.Config{"chatb_bot_token": "t", "base_url": u} }, []errorRow{
		{name: "401 bad token", status: 401, body: `{"message":"401: Unauthorized","code":0}`, want: notify.FailureUnauthorized},
		{name: "50001 missing access", status: 403, body: discordError(50001, "Missing Access"), want: notify.FailureUnauthorized},
		{name: "50013 missing permissions", status: 403, body: discordError(50013, "Missing Permissions"), want: notify.FailureUnauthorized},
		{name: "50001 on 400", status: 400, body: discordError(50001, "Missing Access"), want: notify.FailureUnauthorized},
		{name: "10003 unknown channel", status: 404, body: discordError(10003, "Unknown Channel"), want: notify.FailureInvalidRequest},
		{name: "50035 invalid form body", status: 400, body: discordError(50035, "Invalid Form Body"), want: notify.FailureInvalidRequest},
		{name: "50006 empty message", status: 400, body: discordError(50006, "Cannot send an empty message"), want: notify.FailureInvalidRequest},
		{name: "429 header", status: 429, body: rateLimitBody, header: map[string]string{"Retry-After": "2"}, want: notify.FailureRateLimited, retryAfter: 2 * time.Second},
		{name: "429 body only", status: 429, body: rateLimitBody, want: notify.FailureRateLimited, retryAfter: 1500 * time.Millisecond},
		{name: "500", status: 500, body: "", want: notify.FailureTemporaryUnavailable},
		{name: "503", status: 503, body: discordError(0, "upstream"), want: notify.FailureTemporaryUnavailable},
		{name: "unlisted code 4xx", status: 400, body: discordError(99999, "new"), want: notify.FailureInvalidRequest},
		{name: "404 not json", status: 404, body: "404 page not found", want: notify.FailureInvalidRequest},
	})
}

func TestTimeout(t *testing.T) {
	t.Parallel()
	srvURL := providertest.Hang(t)
	deps := provider.Deps{HTTP: providertest.Client(50 * time.Millisecond)}
	for _, tc := range []struct {
		kind provider.Kind
		cfg  provider.Config
	}{
		{WebhookKind(), provider.Config{"chatb_webhook_url": srvURL + "/api/webhooks/1/SECRET"}},
		{BotKind(), provider.Config{"chatb_bot_token": "t", "base_url": srvURL}},
	} {
		p, err := tc.kind.New(tc.cfg, deps)
		require.NoError(t, err)
		res := providertest.RequireTimeouts(t, p, msg)
		require.NotContains(t, res[0].Err.Message, "SECRET", "the webhook credential stays out of the error")
	}
}

// Without AllowPrivate (and with Deps.HTTP unset, the shared default
// client), the SSRF guard refuses the loopback test server.
func TestGuardedByDefault(t *testing.T) {
	t.Parallel()
	providertest.RequireGuardedByDefault(t, BotKind(), func(url string) provider.Config {
		return provider.Config{"chatb_bot_token": "t", "base_url": url}
	}, msg)
}
