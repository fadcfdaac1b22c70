package slack

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider"
	"github.com/notifyd/notifyd/internal/provider/providertest"
)

var msg = provider.Message{ID: "req-1", Channel: notify.ChannelChatABot, To: "C0123ABC", Title: "Deploy", Text: "build 42 is live"}

// webhookConfig is a webhook account whose URL is the vendor's plus path.
func webhookConfig(path string) func(url string) provider.Config {
	return func(u string) provider.Config { return provider.Config{"chata_webhook_url": u + path} }
}

// botConfig is a bot account for the vendor at url.
func botConfig(url string) provider.Config {
	return provider.Config{"chata_bot_token": "xoxb-t", "base_url": url}
}

func TestKinds(t *testing.T) {
	t.Parallel()
	one := provider.BatchDefaults{MaxSize: 1}
	providertest.RequireKind(t, WebhookKind(), providertest.KindWant{ID: "chata_webhook", Channel: notify.ChannelChatAWebhook, Required: []string{"chata_webhook_url"}, Batch: one})
	providertest.RequireKind(t, BotKind(), providertest.KindWant{ID: "chata_bot", Channel: notify.ChannelChatABot, Required: []string{"chata_bot_token"}, Optional: []string{"base_url"}, Batch: one})
}

func TestMissingKey(t *testing.T) {
	t.Parallel()
	providertest.RequireInvalidConfigs(t, WebhookKind(), provider.Config{}, provider.Config{"chata_webhook_url": ""}, provider.Config{"chata_webhook_url": "not a url"})
	providertest.RequireInvalidConfigs(t, BotKind(), provider.Config{}, provider.Config{"chata_bot_token": "xoxb-1", "base_url": "slack.com"})
}

func TestText(t *testing.T) {
	t.Parallel()
	require.Equal(t, "*T*\nbody", text(provider.Message{Title: "T", Text: "body"}))
	require.Equal(t, "body", text(provider.Message{Text: "body"}))
	require.Equal(t, "*T*", text(provider.Message{Title: " T "}))
}

func TestWebhookSuccess(t *testing.T) {
	t.Parallel()
	rec, srv := providertest.NewRecorder(t, http.StatusOK, "ok", nil)
	p := providertest.MustNew(t, WebhookKind(), provider.Config{"chata_webhook_url": srv.URL + "/services/T000/B000/XXXX"})
	res := p.Send(context.Background(), []provider.Message{msg})
	require.Len(t, res, 1)
	require.Nil(t, res[0].Err)
	require.Empty(t, res[0].MessageID, "incoming webhooks return no id")
	require.Equal(t, srv.URL+"/services/…", res[0].Exchange.URL, "the secret path is redacted")
	require.Equal(t, 200, res[0].Exchange.Response.HTTPStatus)
	require.Equal(t, webhookPayload{Text: "*Deploy*\nbuild 42 is live"}, res[0].Exchange.Request)
	reqs := rec.Requests()
	require.Len(t, reqs, 1)
	providertest.Golden(t, "webhook", []byte(reqs[0]))
}

func TestBotSuccess(t *testing.T) {
	t.Parallel()
	rec, srv := providertest.NewRecorder(t, http.StatusOK,
		`{"ok":true,"channel":"C0123ABC","ts":"1503435956.000247","message":{"text":"x"}}`, nil)
	// base_url replaces scheme and host only; its path is ignored.
	p := providertest.MustNew(t, BotKind(), provider.Config{"chata_bot_token": "xoxb-test-token", "base_url": srv.URL + "/ignored"})
	res := p.Send(context.Background(), []provider.Message{msg})
	require.Len(t, res, 1)
	require.Nil(t, res[0].Err)
	require.Equal(t, "C0123ABC:1503435956.000247", res[0].MessageID)
	require.Equal(t, srv.URL+"/api/chat.postMessage", res[0].Exchange.URL)
	providertest.RequireHidden(t, res[0].Exchange, "xoxb") // the token is never logged
	reqs := rec.Requests()
	require.Len(t, reqs, 1)
	providertest.Golden(t, "bot", []byte(reqs[0]))
}

func TestBotSendsOneCallPerMessage(t *testing.T) {
	t.Parallel()
	rec, srv := providertest.NewRecorder(t, http.StatusOK, `{"ok":true,"channel":"C1","ts":"1.2"}`, nil)
	p := providertest.MustNew(t, BotKind(), provider.Config{"chata_bot_token": "xoxb-t", "base_url": srv.URL})
	msgs := []provider.Message{{To: "C1", Text: "a"}, {To: "", Text: "b"}, {To: "C1", Text: "c"}}
	res := p.Send(context.Background(), msgs)
	require.Len(t, res, 3)
	require.Nil(t, res[0].Err)
	providertest.RequireRefused(t, res[1]) // missing channel
	require.Nil(t, res[2].Err)
	require.Len(t, rec.Requests(), 2)
}

func TestEmptyText(t *testing.T) {
	t.Parallel()
	rec, srv := providertest.NewRecorder(t, http.StatusOK, "ok", nil)
	p := providertest.MustNew(t, WebhookKind(), provider.Config{"chata_webhook_url": srv.URL})
	res := p.Send(context.Background(), []provider.Message{{}})
	require.Equal(t, notify.FailureInvalidRequest, res[0].Err.Code)
	require.Empty(t, rec.Requests())
}

func TestErrorMappingWebhook(t *testing.T) {
	t.Parallel()
	rows := []providertest.ErrorRow{
		{Name: "invalid_payload", Status: 400, Body: "invalid_payload", Want: notify.FailureInvalidRequest},
		{Name: "user_not_found", Status: 400, Body: "user_not_found", Want: notify.FailureInvalidRequest},
		{Name: "no_text", Status: 400, Body: "no_text", Want: notify.FailureInvalidRequest},
		{Name: "invalid_blocks", Status: 400, Body: "invalid_blocks", Want: notify.FailureInvalidRequest},
		{Name: "channel_not_found", Status: 404, Body: "channel_not_found", Want: notify.FailureInvalidRequest},
		{Name: "no_service", Status: 404, Body: "no_service", Want: notify.FailureInvalidRequest},
		{Name: "channel_is_archived", Status: 410, Body: "channel_is_archived", Want: notify.FailureInvalidRequest},
		{Name: "action_prohibited", Status: 403, Body: "action_prohibited", Want: notify.FailureUnauthorized},
		{Name: "invalid_token 403", Status: 403, Body: "invalid_token", Want: notify.FailureUnauthorized},
		{Name: "invalid_token 400", Status: 400, Body: "invalid_token", Want: notify.FailureUnauthorized},
		{Name: "401", Status: 401, Body: "", Want: notify.FailureUnauthorized},
		{Name: "429", Status: 429, Body: "rate_limited", Header: map[string]string{"Retry-After": "7"}, Want: notify.FailureRateLimited, RetryAfter: 7 * time.Second},
		{Name: "rollup_error", Status: 500, Body: "rollup_error", Want: notify.FailureTemporaryUnavailable},
		{Name: "503", Status: 503, Body: "", Want: notify.FailureTemporaryUnavailable},
		{Name: "other 4xx", Status: 400, Body: "something_new", Want: notify.FailureInvalidRequest},
		{Name: "200 not ok", Status: 200, Body: "not ok", Want: notify.FailureUnknown},
		{Name: "204", Status: 204, Body: "", Want: notify.FailureUnknown},
	}
	providertest.RunErrorRows(t, WebhookKind(), webhookConfig(""), msg, rows)
}

func TestErrorMappingBot(t *testing.T) {
	t.Parallel()
	okFalse := func(code string) string { return `{"ok":false,"error":"` + code + `"}` }
	rows := []providertest.ErrorRow{
		{Name: "invalid_auth", Status: 200, Body: okFalse("invalid_auth"), Want: notify.FailureUnauthorized},
		{Name: "not_authed", Status: 200, Body: okFalse("not_authed"), Want: notify.FailureUnauthorized},
		{Name: "token_revoked", Status: 200, Body: okFalse("token_revoked"), Want: notify.FailureUnauthorized},
		{Name: "account_inactive", Status: 200, Body: okFalse("account_inactive"), Want: notify.FailureUnauthorized},
		{Name: "missing_scope", Status: 200, Body: okFalse("missing_scope"), Want: notify.FailureUnauthorized},
		{Name: "channel_not_found", Status: 200, Body: okFalse("channel_not_found"), Want: notify.FailureInvalidRequest},
		{Name: "not_in_channel", Status: 200, Body: okFalse("not_in_channel"), Want: notify.FailureInvalidRequest},
		{Name: "is_archived", Status: 200, Body: okFalse("is_archived"), Want: notify.FailureInvalidRequest},
		{Name: "no_text", Status: 200, Body: okFalse("no_text"), Want: notify.FailureInvalidRequest},
		{Name: "msg_too_long", Status: 200, Body: okFalse("msg_too_long"), Want: notify.FailureInvalidRequest},
		{Name: "invalid_blocks", Status: 200, Body: okFalse("invalid_blocks"), Want: notify.FailureInvalidRequest},
		{Name: "internal_error", Status: 200, Body: okFalse("internal_error"), Want: notify.FailureTemporaryUnavailable},
		{Name: "fatal_error", Status: 200, Body: okFalse("fatal_error"), Want: notify.FailureTemporaryUnavailable},
		{Name: "ratelimited 200", Status: 200, Body: okFalse("ratelimited"), Header: map[string]string{"Retry-After": "30"}, Want: notify.FailureRateLimited, RetryAfter: 30 * time.Second},
		{Name: "ratelimited 429", Status: 429, Body: okFalse("ratelimited"), Header: map[string]string{"Retry-After": "3"}, Want: notify.FailureRateLimited, RetryAfter: 3 * time.Second},
		{Name: "unlisted code", Status: 200, Body: okFalse("something_new"), Want: notify.FailureUnknown},
		{Name: "401", Status: 401, Body: okFalse("invalid_auth"), Want: notify.FailureUnauthorized},
		{Name: "403", Status: 403, Body: "", Want: notify.FailureUnauthorized},
		{Name: "500", Status: 500, Body: "", Want: notify.FailureTemporaryUnavailable},
		{Name: "502 html", Status: 502, Body: "<html>bad gateway</html>", Want: notify.FailureTemporaryUnavailable},
		{Name: "200 not json", Status: 200, Body: "<html>", Want: notify.FailureUnknown},
		{Name: "404 not json", Status: 404, Body: "not found", Want: notify.FailureInvalidRequest},
	}
	providertest.RunErrorRows(t, BotKind(), botConfig, msg, rows)
}

func TestTimeout(t *testing.T) {
	t.Parallel()
	// The webhook credential stays out of the error.
	providertest.RequireHangTimeouts(t, WebhookKind(), webhookConfig("/services/T0/B0/SECRET"), msg, "SECRET")
	providertest.RequireHangTimeouts(t, BotKind(), botConfig, msg, "SECRET")
}

// Without AllowPrivate (and with Deps.HTTP unset, the shared default
// client), the SSRF guard refuses the loopback test server.
func TestGuardedByDefault(t *testing.T) {
	t.Parallel()
	providertest.RequireGuardedByDefault(t, BotKind(), botConfig, msg)
}
