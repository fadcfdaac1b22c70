// Package bounce reads the email vendors' delivery-feedback callbacks:
// Amazon SNS messages carrying SES events (maily_email), Svix-signed Resend
// webhooks (mailx_email) and Postmark bounce and spam-complaint webhooks
// (mailz_email). It verifies signatures and turns each payload into
// vendor-neutral Events; it stores nothing and knows nothing of HTTP
// routing. It makes no network call either: SNS signatures are checked
// with certificates fetched over HTTP, which internal/bounce/snshttp does.
package bounce

import (
	"errors"
	"net/mail"
	"strings"
	"time"
)

// Event types.
const (
	TypeBounce    = "bounce"
	TypeComplaint = "complaint"
	// TypeDelivery is the vendor's report that the message reached the
	// recipient's mail server (issue 35): a delivery receipt, not feedback.
	TypeDelivery = "delivery"
)

// Bounce classes. Only a permanent bounce suppresses the address.
const (
	Permanent    = "permanent"
	Transient    = "transient"
	Undetermined = "undetermined"
)

// Event is one bounce, complaint or delivery for one recipient of one
// message.
type Event struct {
	Type       string // bounce | complaint
	BounceType string // permanent | transient | undetermined (bounces only)
	MessageID  string // the id the vendor answered at send time
	Recipient  string // lower-cased bare address
	Detail     string // the vendor's explanation, for the attempt history
	EventID    string // unique per vendor event and recipient, for dedupe
	OccurredAt time.Time
}

// Suppresses reports whether the event puts the address on the list, and
// with which reason.
func (e Event) Suppresses() (reason string, ok bool) {
	switch {
	case e.Type == TypeComplaint:
		return "complaint", true
	case e.Type == TypeBounce && e.BounceType == Permanent:
		return "hard_bounce", true
	}
	return "", false
}

// ErrMalformed is a payload that does not parse as the vendor's format.
var ErrMalformed = errors.New("malformed callback payload")

// ErrSignature is a payload whose signature does not verify.
var ErrSignature = errors.New("invalid callback signature")

func malformed(msg string) error { return errors.Join(ErrMalformed, errors.New(msg)) }

// normalizeAddress returns the bare, lower-cased address of a recipient as
// vendors report it ("a@b.c" or "Name <a@b.c>"), or "" when it is none.
func normalizeAddress(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > 320 {
		return ""
	}
	if a, err := mail.ParseAddress(s); err == nil {
		return strings.ToLower(a.Address)
	}
	return ""
}

// parseTime reads an RFC 3339 timestamp, falling back to now.
func parseTime(s string, now time.Time) time.Time {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC()
	}
	return now
}

// clip bounds a vendor-supplied text kept in the history, as valid UTF-8
// without NUL (PostgreSQL refuses both).
func clip(s string, n int) string {
	if len(s) > n {
		s = s[:n]
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, ""), "\x00", "")
}
