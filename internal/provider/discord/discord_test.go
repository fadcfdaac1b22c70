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

// webhookConfig is a webhook account whose URL is the vendor's plus path.
func webhookConfig(path string) func(url string) provider.Config {
	return func(u string) provider.Config { return provider.Config{"chatb_webhook_url": u + path} }
}

// botConfig is a bot account for the vendor at url.
func botConfig(url string) provider.Config {
	return provider.Config{"chatb_bot_token": "t", "base_url": url}
}

func TestKinds(t *testing.T) {
	t.Parallel()
	one := provider.BatchDefaults{MaxSize: 1}
	providertest.RequireKind(t, WebhookKind(), providertest.KindWant{ID: "chatb_webhook", Channel: notify.ChannelChatBWebhook, Required: []string{"chatb_webhook_url"}, Batch: one})
	providertest.RequireKind(t, BotKind(), providertest.KindWant{ID: "chatb_bot", Channel: notify.ChannelChatBBot, Required: []string{"chatb_bot_token"}, Optional: []string{"base_url"}, Batch: one})
}

func TestMissingKey(t *testing.T) {
	t.Parallel()
	providertest.RequireInvalidConfigs(t, WebhookKind(), provider.Config{}, provider.Config{"chatb_webhook_url": "discord.com/api/webhooks/1/x"})
	providertest.RequireInvalidConfigs(t, BotKind(), provider.Config{}, provider.Config{"chatb_bot_token": "t", "base_url": "ftp://discord.com"})
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
	providertest.RequireHidden(t, res[0].Exchange, "bot-test-token") // the token is never logged
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
		providertest.RequireRefused(t, r)
	}
	require.Nil(t, res[4].Err)
	require.Len(t, rec.Requests(), 2)
}

func discordError(code int, message string) string {
	b, _ := json.Marshal(map[string]any{"code": code, "message": message})
	return string(b)
}

const rateLimitBody = `{"message":"You are being rate limited.","retry_after":1.5,"global":false}`

func TestErrorMappingWebhook(t *testing.T) {
	t.Parallel()
	providertest.RunErrorRows(t, WebhookKind(), webhookConfig(""), msg, []providertest.ErrorRow{
		{Name: "10015 unknown webhook", Status: 404, Body: discordError(10015, "Unknown Webhook"), Want: notify.FailureInvalidRequest},
		{Name: "50027 invalid token 401", Status: 401, Body: discordError(50027, "Invalid Webhook Token"), Want: notify.FailureUnauthorized},
		{Name: "50027 invalid token 400", Status: 400, Body: discordError(50027, "Invalid Webhook Token"), Want: notify.FailureUnauthorized},
		{Name: "50006 empty message", Status: 400, Body: discordError(50006, "Cannot send an empty message"), Want: notify.FailureInvalidRequest},
		{Name: "50035 invalid form body", Status: 400, Body: discordError(50035, "Invalid Form Body"), Want: notify.FailureInvalidRequest},
		{Name: "429 header", Status: 429, Body: rateLimitBody, Header: map[string]string{"Retry-After": "2"}, Want: notify.FailureRateLimited, RetryAfter: 2 * time.Second},
		{Name: "429 body only", Status: 429, Body: rateLimitBody, Want: notify.FailureRateLimited, RetryAfter: 1500 * time.Millisecond},
		{Name: "500", Status: 500, Body: "", Want: notify.FailureTemporaryUnavailable},
		{Name: "502 html", Status: 502, Body: "<html>bad gateway</html>", Want: notify.FailureTemporaryUnavailable},
		{Name: "403", Status: 403, Body: discordError(50013, "Missing Permissions"), Want: notify.FailureUnauthorized},
		{Name: "unlisted code 4xx", Status: 400, Body: discordError(99999, "new"), Want: notify.FailureInvalidRequest},
		{Name: "404 not json", Status: 404, Body: "404 page not found", Want: notify.FailureInvalidRequest},
		{Name: "3xx not followed", Status: 304, Body: "", Want: notify.FailureUnknown},
	})
}

func TestErrorMappingBot(t *testing.T) {
	t.Parallel()
	providertest.RunErrorRows(t, BotKind(), botConfig, msg, []providertest.ErrorRow{
		{Name: "401 bad token", Status: 401, Body: `{"message":"401: Unauthorized","code":0}`, Want: notify.FailureUnauthorized},
		{Name: "50001 missing access", Status: 403, Body: discordError(50001, "Missing Access"), Want: notify.FailureUnauthorized},
		{Name: "50013 missing permissions", Status: 403, Body: discordError(50013, "Missing Permissions"), Want: notify.FailureUnauthorized},
		{Name: "50001 on 400", Status: 400, Body: discordError(50001, "Missing Access"), Want: notify.FailureUnauthorized},
		{Name: "10003 unknown channel", Status: 404, Body: discordError(10003, "Unknown Channel"), Want: notify.FailureInvalidRequest},
		{Name: "50035 invalid form body", Status: 400, Body: discordError(50035, "Invalid Form Body"), Want: notify.FailureInvalidRequest},
		{Name: "50006 empty message", Status: 400, Body: discordError(50006, "Cannot send an empty message"), Want: notify.FailureInvalidRequest},
		{Name: "429 header", Status: 429, Body: rateLimitBody, Header: map[string]string{"Retry-After": "2"}, Want: notify.FailureRateLimited, RetryAfter: 2 * time.Second},
		{Name: "429 body only", Status: 429, Body: rateLimitBody, Want: notify.FailureRateLimited, RetryAfter: 1500 * time.Millisecond},
		{Name: "500", Status: 500, Body: "", Want: notify.FailureTemporaryUnavailable},
		{Name: "503", Status: 503, Body: discordError(0, "upstream"), Want: notify.FailureTemporaryUnavailable},
		{Name: "unlisted code 4xx", Status: 400, Body: discordError(99999, "new"), Want: notify.FailureInvalidRequest},
		{Name: "404 not json", Status: 404, Body: "404 page not found", Want: notify.FailureInvalidRequest},
	})
}

func TestTimeout(t *testing.T) {
	t.Parallel()
	// The webhook credential stays out of the error.
	providertest.RequireHangTimeouts(t, WebhookKind(), webhookConfig("/api/webhooks/1/SECRET"), msg, "SECRET")
	providertest.RequireHangTimeouts(t, BotKind(), botConfig, msg, "SECRET")
}

// Without AllowPrivate (and with Deps.HTTP unset, the shared default
// client), the SSRF guard refuses the loopback test server.
func TestGuardedByDefault(t *testing.T) {
	t.Parallel()
	providertest.RequireGuardedByDefault(t, BotKind(), botConfig, msg)
}
