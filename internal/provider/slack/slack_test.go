package slack

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider"
	"github.com/notifyd/notifyd/internal/provider/providertest"
)

var msg = provider.Message{ID: "req-1", Channel: notify.ChannelChatABot, To: "C0123ABC", Title: "Deploy", Text: "build 42 is live"}

func TestKinds(t *testing.T) {
	t.Parallel()
	w, b := WebhookKind(), BotKind()
	require.Equal(t, "chata_webhook", w.ID)
	require.Equal(t, notify.ChannelChatAWebhook, w.Channel)
	require.Equal(t, []string{"chata_webhook_url"}, w.Required)
	require.Equal(t, "chata_bot", b.ID)
	require.Equal(t, notify.ChannelChatABot, b.Channel)
	require.Equal(t, []string{"chata_bot_token"}, b.Required)
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
		{WebhookKind(), provider.Config{"chata_webhook_url": ""}},
		{WebhookKind(), provider.Config{"chata_webhook_url": "not a url"}},
		{BotKind(), provider.Config{}},
		{BotKind(), provider.Config{"chata_bot_token": "xoxb-1", "base_url": "slack.com"}},
	} {
		providertest.RequireInvalid(t, tc.kind, tc.cfg)
	}
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
	logged, err := json.Marshal(res[0].Exchange.Request)
	require.NoError(t, err)
	require.NotContains(t, string(logged), "xoxb", "the token is never logged")
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
	require.NotNil(t, res[1].Err, "missing channel")
	require.Equal(t, notify.FailureInvalidRequest, res[1].Err.Code)
	require.Nil(t, res[1].Exchange.Response, "no call was made")
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

type errorRow struct {
	name       string
	status     int
	body       string
	header     map[string]string
	want       notify.FailureCode
	retryAfter time.Duration
}

func TestErrorMappingWebhook(t *testing.T) {
	t.Parallel()
	rows := []errorRow{
		{name: "invalid_payload", status: 400, body: "invalid_payload", want: notify.FailureInvalidRequest},
		{name: "user_not_found", status: 400, body: "user_not_found", want: notify.FailureInvalidRequest},
		{name: "no_text", status: 400, body: "no_text", want: notify.FailureInvalidRequest},
		{name: "invalid_blocks", status: 400, body: "invalid_blocks", want: notify.FailureInvalidRequest},
		{name: "channel_not_found", status: 404, body: "channel_not_found", want: notify.FailureInvalidRequest},
		{name: "no_service", status: 404, body: "no_service", want: notify.FailureInvalidRequest},
		{name: "channel_is_archived", status: 410, body: "channel_is_archived", want: notify.FailureInvalidRequest},
		{name: "action_prohibited", status: 403, body: "action_prohibited", want: notify.FailureUnauthorized},
		{name: "invalid_token 403", status: 403, body: "invalid_token", want: notify.FailureUnauthorized},
		{name: "invalid_token 400", status: 400, body: "invalid_token", want: notify.FailureUnauthorized},
		{name: "401", status: 401, body: "", want: notify.FailureUnauthorized},
		{name: "429", status: 429, body: "rate_limited", header: map[string]string{"Retry-After": "7"}, want: notify.FailureRateLimited, retryAfter: 7 * time.Second},
		{name: "rollup_error", status: 500, body: "rollup_error", want: notify.FailureTemporaryUnavailable},
		{name: "503", status: 503, body: "", want: notify.FailureTemporaryUnavailable},
		{name: "other 4xx", status: 400, body: "something_new", want: notify.FailureInvalidRequest},
		{name: "200 not ok", status: 200, body: "not ok", want: notify.FailureUnknown},
		{name: "204", status: 204, body: "", want: notify.FailureUnknown},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			t.Parallel()
			_, srv := providertest.NewRecorder(t, row.status, row.body, row.header)
			p := providertest.MustNew(t, WebhookKind(), provider.Config{"chata_webhook_url": srv.URL})
			res := p.Send(context.Background(), []provider.Message{msg})
			require.NotNil(t, res[0].Err)
			require.Equal(t, row.want, res[0].Err.Code, res[0].Err.Message)
			require.Equal(t, row.retryAfter, res[0].Err.RetryAfter)
			require.Equal(t, row.status, res[0].Exchange.Response.HTTPStatus)
		})
	}
}

func TestErrorMappingBot(t *testing.T) {
	t.Parallel()
	okFalse := func(code string) string { return `{"ok":false,"error":"` + code + `"}` }
	rows := []errorRow{
		{name: "invalid_auth", status: 200, body: okFalse("invalid_auth"), want: notify.FailureUnauthorized},
		{name: "not_authed", status: 200, body: okFalse("not_authed"), want: notify.FailureUnauthorized},
		{name: "token_revoked", status: 200, body: okFalse("token_revoked"), want: notify.FailureUnauthorized},
		{name: "account_inactive", status: 200, body: okFalse("account_inactive"), want: notify.FailureUnauthorized},
		{name: "missing_scope", status: 200, body: okFalse("missing_scope"), want: notify.FailureUnauthorized},
		{name: "channel_not_found", status: 200, body: okFalse("channel_not_found"), want: notify.FailureInvalidRequest},
		{name: "not_in_channel", status: 200, body: okFalse("not_in_channel"), want: notify.FailureInvalidRequest},
		{name: "is_archived", status: 200, body: okFalse("is_archived"), want: notify.FailureInvalidRequest},
		{name: "no_text", status: 200, body: okFalse("no_text"), want: notify.FailureInvalidRequest},
		{name: "msg_too_long", status: 200, body: okFalse("msg_too_long"), want: notify.FailureInvalidRequest},
		{name: "invalid_blocks", status: 200, body: okFalse("invalid_blocks"), want: notify.FailureInvalidRequest},
		{name: "internal_error", status: 200, body: okFalse("internal_error"), want: notify.FailureTemporaryUnavailable},
		{name: "fatal_error", status: 200, body: okFalse("fatal_error"), want: notify.FailureTemporaryUnavailable},
		{name: "ratelimited 200", status: 200, body: okFalse("ratelimited"), header: map[string]string{"Retry-After": "30"}, want: notify.FailureRateLimited, retryAfter: 30 * time.Second},
		{name: "ratelimited 429", status: 429, body: okFalse("ratelimited"), header: map[string]string{"Retry-After": "3"}, want: notify.FailureRateLimited, retryAfter: 3 * time.Second},
		{name: "unlisted code", status: 200, body: okFalse("something_new"), want: notify.FailureUnknown},
		{name: "401", status: 401, body: okFalse("invalid_auth"), want: notify.FailureUnauthorized},
		{name: "403", status: 403, body: "", want: notify.FailureUnauthorized},
		{name: "500", status: 500, body: "", want: notify.FailureTemporaryUnavailable},
		{name: "502 html", status: 502, body: "<html>bad gateway</html>", want: notify.FailureTemporaryUnavailable},
		{name: "200 not json", status: 200, body: "<html>", want: notify.FailureUnknown},
		{name: "404 not json", status: 404, body: "not found", want: notify.FailureInvalidRequest},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			t.Parallel()
			_, srv := providertest.NewRecorder(t, row.status, row.body, row.header)
			p := providertest.MustNew(t, BotKind(), provider.Config{"chata_bot_token": "xoxb-t", "base_url": srv.URL})
			res := p.Send(context.Background(), []provider.Message{msg})
			require.NotNil(t, res[0].Err)
			require.Equal(t, row.want, res[0].Err.Code, res[0].Err.Message)
			require.Equal(t, row.retryAfter, res[0].Err.RetryAfter)
			require.Empty(t, res[0].MessageID)
		})
	}
}

func TestTimeout(t *testing.T) {
	t.Parallel()
	srvURL := providertest.Hang(t)
	deps := provider.Deps{HTTP: providertest.Client(50 * time.Millisecond)}
	for _, tc := range []struct {
		kind provider.Kind
		cfg  provider.Config
	}{
		{WebhookKind(), provider.Config{"chata_webhook_url": srvURL + "/services/T0/B0/SECRET"}},
		{BotKind(), provider.Config{"chata_bot_token": "xoxb-t", "base_url": srvURL}},
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
		return provider.Config{"chata_bot_token": "xoxb-t", "base_url": url}
	}, msg)
}
