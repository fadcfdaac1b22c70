package discord

import "github.com/notifyd/notifyd/internal/notify"

// errorCodes maps Discord's JSON error codes (PROVIDERS.md chatb_webhook
// and chatb_bot). HTTP 429/5xx/401/403 are classified by provider.Do
// before this table is read; 50001/50013 come with 403 and are listed so
// the table stands on its own.
var errorCodes = map[int]notify.FailureCode{
	10003: notify.FailureInvalidRequest, // Unknown Channel
	10015: notify.FailureInvalidRequest, // Unknown Webhook (deleted)
	50001: notify.FailureUnauthorized,   // Missing Access
	50013: notify.FailureUnauthorized,   // Missing Permissions
	50027: notify.FailureUnauthorized,   // Invalid Webhook Token (code UNCONFIRMED)
	50006: notify.FailureInvalidRequest, // Cannot send an empty message
	50035: notify.FailureInvalidRequest, // Invalid Form Body (also a non-snowflake channel id)
}
