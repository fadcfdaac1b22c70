package otp

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/notifyd/notifyd/internal/notify"
)

// NormalizePhone removes spaces (any Unicode white space), parentheses,
// dots and hyphens, as SPEC's OTP send rules say, so that "010-1234 5678"
// and "01012345678" count as one recipient. Everything else, including a
// leading '+', is kept.
func NormalizePhone(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '(', ')', '.', '-':
			return -1
		}
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
}

// NormalizeEmail trims and lower-cases an address (SPEC's OTP send rules),
// so per-recipient limits cannot be dodged by changing case.
func NormalizeEmail(s string) string {
	return strings.ToLower(strings.TrimSpace(s))
}

// Normalize applies the rule of the channel: the email rule for email, the
// phone rule for every other channel (sms, msgr_alimtalk).
func Normalize(channel notify.Channel, to string) string {
	if channel == notify.ChannelEmail {
		return NormalizeEmail(to)
	}
	return NormalizePhone(to)
}

// Mask hides a normalized recipient for recipientMasked and the token's sub
// claim (SPEC "OTP verification session").
//
// Phone (every channel but email): every character but the last 4 becomes
// '*'; a value of 4 characters or fewer is returned as is.
//
// Email: the first 2 characters of the local part stay, every other
// character of the local part becomes '*', and the domain (from the last
// '@') is kept: "abcdef@example.com" → "ab****@example.com". A local part
// of 1 or 2 characters shows what it has ("a@example.com" stays), because
// the rule hides only what follows the first 2. A value without '@' is
// masked as a bare local part. Characters are counted as runes, not bytes.
func Mask(channel notify.Channel, normalized string) string {
	if channel == notify.ChannelEmail {
		local, domain := normalized, ""
		if i := strings.LastIndexByte(normalized, '@'); i >= 0 {
			local, domain = normalized[:i], normalized[i:]
		}
		return maskRunes(local, 2, true) + domain
	}
	return maskRunes(normalized, 4, false)
}

// maskRunes keeps keep runes at the start (head) or end (!head) of s and
// replaces the others by '*'.
func maskRunes(s string, keep int, head bool) string {
	n := utf8.RuneCountInString(s)
	if n <= keep {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	i := 0
	for _, r := range s {
		visible := i < keep
		if !head {
			visible = i >= n-keep
		}
		if visible {
			b.WriteRune(r)
		} else {
			b.WriteByte('*')
		}
		i++
	}
	return b.String()
}
