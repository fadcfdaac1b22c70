package usecase

import (
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/notifyd/notifyd/internal/mailcheck"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/otp"
)

// MaxLen refuses s longer than n characters, naming field.
func MaxLen(field, s string, n int) error {
	if len(s) > n && utf8.RuneCountInString(s) > n {
		return notify.Invalid("%s must be at most %d characters", field, n)
	}
	return nil
}

// Storable reports whether s can be a stored key or text: valid UTF-8
// without NUL bytes and at most 1,000 bytes. PostgreSQL refuses the others
// as query parameters, so a lookup by such a value is answered "not found"
// (or 400 for text input) before it reaches the store.
func Storable(s string) bool {
	return len(s) <= 1000 && utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}

// DetailNotText ends the 400 detail of a text field holding invalid UTF-8
// or a NUL byte.
const DetailNotText = " must be valid UTF-8 text without NUL characters"

// ValidText refuses text PostgreSQL cannot store (invalid UTF-8, a NUL
// byte) with a 400 naming the field. The JSON API never passes either
// (its decoder refuses NUL and replaces invalid UTF-8), but console forms
// and CSV files reach the rooms as raw bytes: checking here holds every
// path to the same rule.
func ValidText(field, s string) error {
	if !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0 {
		return notify.Invalid("%s"+DetailNotText, field)
	}
	return nil
}

// OneLine refuses control characters (CR and LF above all) and the Unicode
// line and paragraph separators in a value that becomes a mail header, a
// push title or an address: a line break there can add headers.
func OneLine(field, s string) error {
	if HasControl(s) {
		return notify.Invalid("%s must not contain control characters", field)
	}
	return nil
}

// HasControl reports whether s holds what OneLine refuses.
func HasControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return unicode.IsControl(r) || r == '\u2028' || r == '\u2029' })
}

// sendPhoneRE is a phone number once spaces, parentheses, dots and
// hyphens are removed (the OTP rule of SPEC): an optional '+' and digits.
// The number of digits is held only by SPEC's 320 characters, the length
// bound of every address, so that bound means the same on every channel.
var sendPhoneRE = regexp.MustCompile(`^\+?[0-9]{4,}$`)

// CheckAddress holds a recipient address to what SPEC's recipient table
// says the channel's address is: a phone number for sms and msgr_alimtalk,
// an email address for email, a device token (no white space) for
// push_mobile. Webhook labels and bot channel names are free text
// (control characters are refused by OneLine for every channel).
func CheckAddress(field string, ch notify.Channel, addr string) error {
	switch ch {
	case notify.ChannelSMS, notify.ChannelAlimTalk:
		if !sendPhoneRE.MatchString(otp.NormalizePhone(addr)) {
			return notify.Invalid("%s must be a phone number for channel %s", field, ch)
		}
	case notify.ChannelEmail:
		if _, err := mailcheck.Domain(mailcheck.Normalize(addr)); err != nil {
			return notify.Invalid("%s must be an email address for channel email", field)
		}
	case notify.ChannelPush:
		if strings.ContainsFunc(strings.TrimSpace(addr), unicode.IsSpace) {
			return notify.Invalid("%s must be a device token for channel push_mobile", field)
		}
	}
	return nil
}

// CheckRecipient checks the address (when there is one: a webhook
// test-send may omit it), name and title of a send or a test-send; f names
// the field (with a bulk item's prefix).
func CheckRecipient(f func(string) string, ch notify.Channel, addr, name string, title *string) error {
	if err := OneLine(f("recipient.address"), addr); err != nil {
		return err
	}
	if a := strings.TrimSpace(addr); a != "" {
		if err := CheckAddress(f("recipient.address"), ch, a); err != nil {
			return err
		}
	}
	if err := OneLine(f("recipient.name"), name); err != nil {
		return err
	}
	if title != nil {
		return OneLine(f("content.title"), *title)
	}
	return nil
}

// ParseScheduledAt parses a strict ISO 8601 date-time with a T separator
// and a zone, and requires it in the future.
func ParseScheduledAt(s string, now time.Time) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || len(s) < 20 || (s[10] != 'T') {
		return time.Time{}, notify.Invalid("scheduledAt must be a strict ISO 8601 date-time, for example 2026-01-02T15:04:05Z")
	}
	if !t.After(now) {
		return time.Time{}, notify.Invalid("scheduledAt must be in the future")
	}
	return t.UTC(), nil
}

// Dedupe returns in without repeats, in order of first appearance.
func Dedupe(in []string) []string {
	out := make([]string, 0, len(in))
	seen := map[string]bool{}
	for _, v := range in {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// Bounds of the string attributes of a subscriber and of a recipient
// profile: how many keys, and how long a key and a value may be, in
// characters.
const (
	MaxAttributes     = 200
	MaxAttributeKey   = 200
	MaxAttributeValue = 2000
)

// CheckAttributes holds string attributes to their bounds and to text
// PostgreSQL can store; field names the map in details ("attributes",
// "items[3].attributes"), and a value's detail names its key.
func CheckAttributes(field string, m map[string]string) error {
	if len(m) > MaxAttributes {
		return notify.Invalid("%s must have at most %d keys", field, MaxAttributes)
	}
	for k, v := range m {
		if k == "" {
			return notify.Invalid("%s keys must not be empty", field)
		}
		// The key is checked before the value's detail names it.
		if err := ValidText(field+" key", k); err != nil {
			return err
		}
		if err := MaxLen(field+" key", k, MaxAttributeKey); err != nil {
			return err
		}
		if err := ValidText(field+"."+k, v); err != nil {
			return err
		}
		if err := MaxLen(field+"."+k, v, MaxAttributeValue); err != nil {
			return err
		}
	}
	return nil
}
