// Package slack implements the chata_webhook (Slack incoming webhooks) and
// chata_bot (Slack Web API chat.postMessage) provider kinds with plain
// net/http through provider.Do, so that the raw answer reaches the attempt
// history (PROVIDERS.md, chata_webhook and chata_bot).
//
// Message text: msg.Text, preceded by msg.Title in Slack mrkdwn bold
// ("*Title*") on its own first line when a title is set. Text is sent as
// is; mrkdwn escaping (&, <, >) is the renderer's business, since "<@U123>"
// mentions are legitimate content.
package slack

import (
	"strings"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider"
)

// Config keys (SPEC "Provider account").
const (
	keyWebhookURL = "chata_webhook_url"
	keyBotToken   = "chata_bot_token"
	keyBaseURL    = "base_url"
)

// defaultRoot is the Web API root; base_url replaces its scheme and host.
const defaultRoot = "https://slack.com"

// chatBatch: chat kinds have no batch API; one call per message, no
// adapter-level rate cap (0 = unlimited) and no batch wait.
var chatBatch = provider.BatchDefaults{MaxSize: 1}

// WebhookConfig is the configJson of a chata_webhook account.
type WebhookConfig struct {
	// WebhookURL is the incoming-webhook URL; its path is the credential.
	WebhookURL string `json:"chata_webhook_url"`
}

// BotConfig is the configJson of a chata_bot account.
type BotConfig struct {
	// BotToken is the bot token, xoxb-... with its prefix, sent as a
	// Bearer token.
	BotToken string `json:"chata_bot_token"`
	// Endpoint's base_url replaces the scheme and host of the Web API root.
	provider.Endpoint
}

// WebhookKind describes chata_webhook.
func WebhookKind() provider.Kind {
	return provider.Spec[WebhookConfig]{
		ID:       "chata_webhook",
		Channel:  notify.ChannelChatAWebhook,
		Required: []string{keyWebhookURL},
		Batch:    chatBatch,
		New:      newWebhook,
	}.Kind()
}

// BotKind describes chata_bot.
func BotKind() provider.Kind {
	return provider.Spec[BotConfig]{
		ID:       "chata_bot",
		Channel:  notify.ChannelChatABot,
		Required: []string{keyBotToken},
		Optional: []string{keyBaseURL},
		Batch:    chatBatch,
		New:      newBot,
	}.Kind()
}

// text builds the message text: the title as a bold first line, then the body.
func text(msg provider.Message) string {
	title := strings.TrimSpace(msg.Title)
	switch {
	case title == "":
		return msg.Text
	case msg.Text == "":
		return "*" + title + "*"
	}
	return "*" + title + "*\n" + msg.Text
}

func status(ex provider.Exchange) int {
	if ex.Response == nil {
		return 0
	}
	return ex.Response.HTTPStatus
}
