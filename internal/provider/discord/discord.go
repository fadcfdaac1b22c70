// Package discord implements the chatb_webhook (Discord Execute Webhook)
// and chatb_bot (Discord Create Message) provider kinds with plain net/http
// through provider.Do: discordgo keeps its endpoints in process-wide
// variables, which a per-account base_url cannot use (PROVIDERS.md).
//
// Message content: msg.Text, preceded by msg.Title in Discord markdown bold
// ("**Title**") on its own first line when a title is set. Content longer
// than Discord's 2,000 characters (counted in Unicode code points) fails
// with invalid_request before any call rather than being cut, so that no
// partial notification goes out.
package discord

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider"
)

// Config keys (SPEC "Provider account").
const (
	keyWebhookURL = "chatb_webhook_url"
	keyBotToken   = "chatb_bot_token"
	keyBaseURL    = "base_url"
)

// defaultRoot is the REST API root; base_url replaces its scheme and host.
const defaultRoot = "https://discord.com"

// maxContent is Discord's limit on a message's content.
const maxContent = 2000

// chatBatch: chat kinds have no batch API; one call per message, no
// adapter-level rate cap (0 = unlimited) and no batch wait.
var chatBatch = provider.BatchDefaults{MaxSize: 1}

// WebhookConfig is the configJson of a chatb_webhook account.
type WebhookConfig struct {
	// WebhookURL is the Execute Webhook URL; its path is the credential.
	WebhookURL string `json:"chatb_webhook_url"`
}

// BotConfig is the configJson of a chatb_bot account.
type BotConfig struct {
	// BotToken is the bot token, sent as "Authorization: Bot <token>".
	BotToken string `json:"chatb_bot_token"`
	// Endpoint's base_url replaces the scheme and host of the REST API root.
	provider.Endpoint
}

// WebhookKind describes chatb_webhook.
func WebhookKind() provider.Kind {
	return provider.Spec[WebhookConfig]{
		ID:       "chatb_webhook",
		Channel:  notify.ChannelChatBWebhook,
		Required: []string{keyWebhookURL},
		Batch:    chatBatch,
		New:      newWebhook,
	}.Kind()
}

// BotKind describes chatb_bot.
func BotKind() provider.Kind {
	return provider.Spec[BotConfig]{
		ID:       "chatb_bot",
		Channel:  notify.ChannelChatBBot,
		Required: []string{keyBotToken},
		Optional: []string{keyBaseURL},
		Batch:    chatBatch,
		New:      newBot,
	}.Kind()
}

// payload is the body of both calls; Discord takes more fields (embeds,
// username), which notifications do not use.
type payload struct {
	Content string `json:"content"`
}

// content builds the message content and checks Discord's limits.
func content(msg provider.Message) (string, *provider.Error) {
	c := msg.Text
	if title := strings.TrimSpace(msg.Title); title != "" {
		c = "**" + title + "**"
		if msg.Text != "" {
			c += "\n" + msg.Text
		}
	}
	switch n := utf8.RuneCountInString(c); {
	case strings.TrimSpace(c) == "":
		return "", provider.Errorf(notify.FailureInvalidRequest, "empty message content")
	case n > maxContent:
		return "", provider.Errorf(notify.FailureInvalidRequest, "content is %d characters, Discord allows %d", n, maxContent)
	}
	return c, nil
}

// send performs one call and reads Discord's answer: any 2xx is accepted
// (the id comes from the message object when there is one), failures carry
// {"code","message"}.
func send(ctx context.Context, client *http.Client, call provider.Call) provider.Result {
	ex, raw, perr := provider.Do(ctx, client, call)
	if perr != nil {
		if perr.Code == notify.FailureRateLimited && perr.RetryAfter == 0 {
			perr.RetryAfter = bodyRetryAfter(raw)
		}
		return provider.Result{Err: perr, Exchange: ex}
	}
	st := ex.Response.HTTPStatus
	if st >= 200 && st < 300 {
		var m struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal(raw, &m) // 204 and odd bodies still mean accepted
		return provider.Result{MessageID: m.ID, Exchange: ex}
	}
	return provider.Result{Err: classify(st, raw), Exchange: ex}
}

// classify maps an error answer that provider.Do left unclassified (not
// 429, 5xx, 401 or 403).
func classify(status int, raw []byte) *provider.Error {
	var e struct {
		Code    *int   `json:"code"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(raw, &e); err != nil || e.Code == nil {
		return provider.Errorf(provider.UnlistedStatus(status), "HTTP %d: %s", status, provider.Snippet(raw, 300))
	}
	code, ok := errorCodes[*e.Code]
	if !ok {
		code = provider.UnlistedStatus(status)
	}
	return provider.Errorf(code, "HTTP %d: %d %s", status, *e.Code, e.Message)
}

// bodyRetryAfter reads retry_after (seconds, fractional) from a 429 body,
// for answers that lack the Retry-After header.
func bodyRetryAfter(raw []byte) time.Duration {
	var b struct {
		RetryAfter float64 `json:"retry_after"`
	}
	if json.Unmarshal(raw, &b) != nil || b.RetryAfter <= 0 {
		return 0
	}
	return time.Duration(b.RetryAfter * float64(time.Second))
}

func encode(p payload) ([]byte, *provider.Error) {
	b, err := json.Marshal(p)
	if err != nil {
		return nil, provider.Errorf(notify.FailureInvalidRequest, "encode payload: %v", err)
	}
	return b, nil
}
