package slack

import "github.com/notifyd/notifyd/internal/notify"

// webhookErrors maps the plain-text error bodies of incoming webhooks
// (PROVIDERS.md chata_webhook). HTTP 429/5xx/401/403 are classified by
// provider.Do before this table is read.
var webhookErrors = map[string]notify.FailureCode{
	"invalid_payload":     notify.FailureInvalidRequest,
	"user_not_found":      notify.FailureInvalidRequest,
	"no_text":             notify.FailureInvalidRequest,
	"invalid_blocks":      notify.FailureInvalidRequest,
	"channel_is_archived": notify.FailureInvalidRequest,
	"channel_not_found":   notify.FailureInvalidRequest,
	"no_service":          notify.FailureInvalidRequest, // revoked or disabled webhook; HTTP status UNCONFIRMED
	"action_prohibited":   notify.FailureUnauthorized,
	"invalid_token":       notify.FailureUnauthorized,
}

// botErrors maps chat.postMessage's "error" field of {"ok":false} answers,
// which come with HTTP 200 (PROVIDERS.md chata_bot). Codes not listed are
// unknown.
var botErrors = map[string]notify.FailureCode{
	"invalid_auth":      notify.FailureUnauthorized,
	"not_authed":        notify.FailureUnauthorized,
	"token_revoked":     notify.FailureUnauthorized,
	"account_inactive":  notify.FailureUnauthorized,
	"missing_scope":     notify.FailureUnauthorized, // needs chat:write
	"channel_not_found": notify.FailureInvalidRequest,
	"not_in_channel":    notify.FailureInvalidRequest,
	"is_archived":       notify.FailureInvalidRequest,
	"no_text":           notify.FailureInvalidRequest,
	"msg_too_long":      notify.FailureInvalidRequest,
	"invalid_blocks":    notify.FailureInvalidRequest,
	"internal_error":    notify.FailureTemporaryUnavailable,
	"fatal_error":       notify.FailureTemporaryUnavailable,
	"ratelimited":       notify.FailureRateLimited,
}
