package client

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Errors of VerifyWebhook.
var (
	ErrWebhookHeaders   = errors.New("webhook: missing webhook-id, webhook-timestamp or webhook-signature header")
	ErrWebhookTimestamp = errors.New("webhook: timestamp outside tolerance")
	ErrWebhookSignature = errors.New("webhook: no matching signature")
	ErrWebhookSecret    = errors.New("webhook: secret is not whsec_ + base64")
)

// WebhookEvent is the body of a webhook delivery.
type WebhookEvent struct {
	Type      string           `json:"type"` // notification.delivered, .failed or .canceled
	Timestamp time.Time        `json:"timestamp"`
	Data      WebhookEventData `json:"data"`
}

// WebhookEventData describes the notification request the event is about.
type WebhookEventData struct {
	RequestID                 string            `json:"requestId"`
	WorkspaceID               string            `json:"workspaceId"`
	Channel                   string            `json:"channel"`
	Status                    string            `json:"status"`
	RecipientAddress          string            `json:"recipientAddress"`
	SelectedProviderAccountID *string           `json:"selectedProviderAccountId"`
	SelectedProviderMessageID *string           `json:"selectedProviderMessageId"`
	FinalErrorCode            *string           `json:"finalErrorCode"`
	FinalErrorMessage         *string           `json:"finalErrorMessage"`
	Metadata                  map[string]string `json:"metadata"`
	// DeliveredChannel is the channel that delivered the request (nil
	// unless sent): with a cross-channel fallback, a later step's channel.
	DeliveredChannel *string `json:"deliveredChannel"`
	// FallbackStep is the step of the request's cross-channel fallback it
	// reached (0: its own channel); nil for a request without one.
	FallbackStep *int `json:"fallbackStep"`
	// RecipientID and Category are present for a send by recipient id or
	// with a category (issue 32), absent otherwise.
	RecipientID *string `json:"recipientId,omitempty"`
	Category    *string `json:"category,omitempty"`
}

// VerifyWebhook checks a delivery the Standard Webhooks way: the
// webhook-timestamp header must be within tolerance of now (zero means 5
// minutes), and one of the space-separated "v1,<base64>" entries of
// webhook-signature must equal base64(HMAC-SHA256(key, id + "." +
// timestamp + "." + body)), key being the bytes of the base64 after
// "whsec_" in secret. body must be the raw bytes received, before any JSON
// decoding. During a secret rotation deliveries carry two signatures, so
// either the old or the new secret verifies.
func VerifyWebhook(secret string, headers http.Header, body []byte, tolerance time.Duration) error {
	return verifyWebhook(secret, headers, body, tolerance, time.Now())
}

func verifyWebhook(secret string, headers http.Header, body []byte, tolerance time.Duration, now time.Time) error {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil || len(key) == 0 {
		return ErrWebhookSecret
	}
	id, ts, sigs := headers.Get("webhook-id"), headers.Get("webhook-timestamp"), headers.Get("webhook-signature")
	if id == "" || ts == "" || sigs == "" {
		return ErrWebhookHeaders
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return ErrWebhookTimestamp
	}
	if tolerance <= 0 {
		tolerance = 5 * time.Minute
	}
	if d := now.Sub(time.Unix(sec, 0)); d > tolerance || d < -tolerance {
		return ErrWebhookTimestamp
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id + "." + ts + "."))
	m.Write(body)
	// Compared as the text notifyd sends (standard base64, padded): a
	// decoder would also take spellings with other unused bits.
	want := []byte(base64.StdEncoding.EncodeToString(m.Sum(nil)))
	for _, s := range strings.Fields(sigs) {
		version, sig, ok := strings.Cut(s, ",")
		if ok && version == "v1" && hmac.Equal([]byte(sig), want) {
			return nil
		}
	}
	return ErrWebhookSignature
}
