package service

import (
	"regexp"
	"strings"
	"unicode"

	"github.com/notifyd/notifyd/internal/mailcheck"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/otp"
)

// sendPhoneRE is a phone number once spaces, parentheses, dots and
// hyphens are removed (the OTP rule of SPEC): an optional '+' and digits.
// The number of digits is held only by SPEC's 320 characters, the length
// bound of every address, so that bound means the same on every channel.
var sendPhoneRE = regexp.MustCompile(`^\+?[0-9]{4,}$`)

// checkAddress holds a recipient address to what SPEC's recipient table
// says the channel's address is: a phone number for sms and msgr_alimtalk,
// an email address for email, a device token (no white space) for
// push_mobile. Webhook labels and bot channel names are free text
// (control characters are refused by oneLine for every channel).
func checkAddress(field string, ch notify.Channel, addr string) error {
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

// oneLine refuses control characters (CR and LF above all) and the Unicode
// line and paragraph separators in a value that becomes a mail header, a
// push title or an address: a line break there can add headers.
func oneLine(field, s string) error {
	if hasControl(s) {
		return notify.Invalid("%s must not contain control characters", field)
	}
	return nil
}

// hasControl reports whether s holds what oneLine refuses.
func hasControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return unicode.IsControl(r) || r == '\u2028' || r == '\u2029' })
}

// checkRecipient checks the address (when there is one: a webhook
// test-send may omit it), name and title of a send or a test-send; f names
// the field (with a bulk item's prefix).
func checkRecipient(f func(string) string, ch notify.Channel, addr, name string, title *string) error {
	if err := oneLine(f("recipient.address"), addr); err != nil {
		return err
	}
	if a := strings.TrimSpace(addr); a != "" {
		if err := checkAddress(f("recipient.address"), ch, a); err != nil {
			return err
		}
	}
	if err := oneLine(f("recipient.name"), name); err != nil {
		return err
	}
	if title != nil {
		return oneLine(f("content.title"), *title)
	}
	return nil
}
