// Package provider defines the contract every vendor adapter implements, the
// registry entry that describes a provider kind, and the classified error an
// adapter returns. Adapters live in one sub-package per kind and import only
// this package (and notify for the failure codes).
package provider

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
)

// Config is a provider account's decrypted configJson. Adapters never read
// it: Spec decodes it into the kind's typed, documented Config.
type Config map[string]string

// Message is one rendered notification handed to an adapter.
type Message struct {
	// ID is the notification request id; adapters may pass it to the vendor
	// for correlation (Solapi customFields, for example).
	ID      string
	Channel notify.Channel
	// To is the recipient address: phone, email, device token, or chat
	// channel for the bot kinds. Webhook kinds ignore it.
	To     string
	ToName string
	Title  string
	Text   string
	HTML   string
	// Messenger-template fields, injected from the approved template.
	TemplateCode     string
	VendorTemplateID string
	SenderProfileKey string
	Variables        map[string]string
	// Headers are extra mail headers (List-Unsubscribe) for vendors that take them.
	Headers map[string]string
	// Data is key-value data for push messages.
	Data map[string]string
	// IdempotencyKey is the same for a send repeated after its process
	// died before recording the outcome, and differs for a retry after a
	// recorded outcome; vendors that honour one (Resend) drop the repeat.
	// Empty for sends outside a queued run (OTP, test-send).
	IdempotencyKey string
}

// Response is the vendor's answer as received, kept for attempt history.
type Response struct {
	HTTPStatus int               `json:"httpStatus"`
	DurationMs int64             `json:"durationMs"`
	Headers    map[string]string `json:"headers"`
	Body       string            `json:"body"`
}

// Exchange records one vendor call: what was sent (secrets redacted) and the
// answer. Response is nil when no answer came (connection error, timeout).
type Exchange struct {
	Method   string    `json:"method"`
	URL      string    `json:"url"`
	Request  any       `json:"request"`
	Response *Response `json:"response"`
}

// Result is the outcome of one message of a Send call.
type Result struct {
	// MessageID is the vendor's message id, empty when the vendor gives none.
	MessageID string
	// Err is nil on success.
	Err *Error
	// Exchange is the call that carried the message; messages of one batch
	// share it.
	Exchange Exchange
	// Batch is the message's place in the batch call that carried it, set
	// by the dispatcher's batcher (nil when the adapter was called directly).
	Batch *BatchPlace
}

// BatchPlace is a message's position in a batch of Size messages.
type BatchPlace struct {
	Size, Index int
}

// Error is a classified failure of one message.
type Error struct {
	Code    notify.FailureCode
	Message string
	// Final ends the run even when Code normally falls back (vendorA -201).
	Final bool
	// RetryAfter is the vendor's requested wait, when it gave one.
	RetryAfter time.Duration
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %s", e.Code, e.Message) }

// FallsBack reports whether the dispatcher may try the next route.
func (e *Error) FallsBack() bool { return !e.Final && e.Code.FallsBack() }

// Errorf builds a classified error.
func Errorf(code notify.FailureCode, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Provider sends messages through one provider account.
type Provider interface {
	// Send delivers msgs, in one vendor call where the vendor has a batch
	// API and one call per message otherwise. It returns exactly one Result
	// per message, in order. It never returns a nil Err for a message that
	// was not accepted.
	Send(ctx context.Context, msgs []Message) []Result
}

// QuotaChecker is implemented by providers with a balance lookup.
type QuotaChecker interface {
	Quota(ctx context.Context) (Quota, error)
}

// Quota is a provider account's remaining balance (SPEC "Provider
// account"): the domain's record, which adapters fill.
type Quota = notify.Quota

// Deps are the shared facilities an adapter is built with.
type Deps struct {
	// HTTP is the outbound client, with timeouts and the SSRF guard.
	HTTP *http.Client
	// Now is the clock; tests may fix it.
	Now func() time.Time
}

// BatchDefaults are a kind's adapter-batching defaults (SPEC "Adapter
// batching"). MaxSize 1 means per-message sending.
type BatchDefaults struct {
	CallsPerSecond float64
	Window         time.Duration
	MaxSize        int
}

// Kind describes one provider kind: its id, channel, config keys and
// constructor. Adapters make it with Spec; the list of shipped kinds is in
// package provider/kinds.
type Kind struct {
	ID       string
	Channel  notify.Channel
	Required []string
	Optional []string
	Batch    BatchDefaults
	// Idempotent says the vendor drops a repeat of a message sent with the
	// same Message.IdempotencyKey (Resend): a send repeated after a crash
	// costs nothing there.
	Idempotent bool
	// New builds a provider for one account. A missing required key is an
	// *Error with Code invalid_request, checked before the adapter's
	// constructor runs (Spec).
	New func(cfg Config, deps Deps) (Provider, error)
	// Identities builds the vendor's sender-identity API for one account;
	// nil for kinds whose vendor has none (see identity.go).
	Identities func(cfg Config, deps Deps) (notify.IdentityAPI, error)
	// Receipts is how the vendor reports delivery (issue 35):
	// notify.ReceiptsPolled (its providers implement Reporter),
	// notify.ReceiptsPushed (delivery callbacks), or "" for none.
	Receipts string
}

// Reporter is implemented by the providers of kinds whose vendor has a
// per-message result API (Kind.Receipts notify.ReceiptsPolled).
type Reporter interface {
	notify.ReportAPI
}

// Require returns an invalid_request error naming the first key of keys
// that cfg lacks or holds empty, or nil.
func Require(cfg Config, keys ...string) *Error {
	for _, k := range keys {
		if cfg[k] == "" {
			return Errorf(notify.FailureInvalidRequest, "missing required config key %s", k)
		}
	}
	return nil
}

// FailAll returns one copy of err for each message, sharing ex.
func FailAll(msgs []Message, err *Error, ex Exchange) []Result {
	out := make([]Result, len(msgs))
	for i := range out {
		out[i] = Result{Err: err, Exchange: ex}
	}
	return out
}
