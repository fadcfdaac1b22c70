// Package testmode is the policy of test mode (issue 36, item 1): the
// magic recipients whose test sends end in a documented outcome, and the
// vendor answer the in-process simulator gives for each outcome, per
// provider kind. A test request (signed with a test-mode key) runs the
// whole pipeline; its vendor calls go to the simulator the daemon runs in
// process, never over the network. Pure: no I/O of its own.
package testmode

import (
	"context"
	"strings"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
)

// Outcome is what a magic recipient's test send comes to.
type Outcome string

// The outcomes (README "Test mode" documents them with their addresses).
const (
	// Delivered: the simulator accepts the message (every address that is
	// not magic gets this too).
	Delivered Outcome = "delivered"
	// TempFail: the request's first vendor call answers a server error
	// (temporary_unavailable); the fallback route or the job's retry then
	// succeeds.
	TempFail Outcome = "temporary_failure"
	// PermFail: the vendor refuses the recipient (invalid_request): no
	// fallback, no retry, the request fails.
	PermFail Outcome = "permanent_failure"
	// Bounce (email): the vendor accepts the message, then reports a
	// permanent bounce for it, recorded as the attempt's feedback. The
	// magic address is not put on the suppression list, so the test can
	// be repeated. On the other channels the bounce address is accepted.
	Bounce Outcome = "bounce"
	// LateReport: the vendor accepts the message and its delivery report
	// (SMS and AlimTalk kinds, issue 35) says delivered only
	// LateReportDelay later, where others take the simulator's default
	// half second: the receipt stays pending through the first polls.
	// On the other channels, which give no report, it is accepted.
	LateReport Outcome = "late_delivery_report"
)

// LateReportDelay is how long after the send the LateReport address's
// delivery report becomes final: past the receipt poller's first two
// polls (10 s and 20 s after the send by default).
const LateReportDelay = 25 * time.Second

// EmailDomain is the domain of the magic email addresses: .test is
// reserved (RFC 2606), so no real mailbox can have them.
const EmailDomain = "notifyd.test"

// PhonePrefix is the prefix of the magic phone numbers (digits only):
// 010-0000-000N, a number no carrier assigns.
const PhonePrefix = "0100000000"

// TokenPrefix starts the magic push tokens and chat targets.
const TokenPrefix = "notifyd-test-"

// Magic is one magic recipient per outcome and channel family.
type Magic struct {
	Outcome Outcome
	Phone   string // sms, msgr_alimtalk (written with or without hyphens)
	Email   string // email
	Token   string // push_mobile device token, chat channel or label
}

// Recipients is the table of magic recipients, in the README's order.
var Recipients = []Magic{
	{Delivered, "010-0000-0001", "delivered@" + EmailDomain, TokenPrefix + "delivered"},
	{TempFail, "010-0000-0002", "tempfail@" + EmailDomain, TokenPrefix + "tempfail"},
	{PermFail, "010-0000-0003", "permfail@" + EmailDomain, TokenPrefix + "permfail"},
	{Bounce, "010-0000-0004", "bounce@" + EmailDomain, TokenPrefix + "bounce"},
	{LateReport, "010-0000-0005", "late@" + EmailDomain, TokenPrefix + "late"},
}

// OutcomeOf is the outcome of a test send to address on channel:
// Delivered for every address that is not magic. Phone numbers compare
// by their digits, emails and tokens without case.
func OutcomeOf(ch notify.Channel, address string) Outcome {
	a := strings.TrimSpace(address)
	for _, m := range Recipients {
		switch ch {
		case notify.ChannelSMS, notify.ChannelAlimTalk:
			if digits(a) == digits(m.Phone) && a != "" {
				return m.Outcome
			}
		case notify.ChannelEmail:
			if strings.EqualFold(a, m.Email) {
				return m.Outcome
			}
		default:
			if strings.EqualFold(a, m.Token) {
				return m.Outcome
			}
		}
	}
	return Delivered
}

func digits(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Fault is the vendor answer the simulator gives to one call instead of
// accepting it: an HTTP status, or a vendor error code in the vendor's
// own format (the simulator's fault catalogue, internal/simulator doc).
type Fault struct {
	Status     int
	VendorCode string
}

// permanent is each kind's answer refusing the recipient, one the
// kind's adapter classifies invalid_request (its codes table).
var permanent = map[string]Fault{
	"vendora_sms":   {VendorCode: "-301"},         // invalid recipient number
	"vendora_msgr":  {VendorCode: "-301"},         // invalid recipient number
	"vendorb_sms":   {VendorCode: "1060"},         // blocked recipient
	"vendorb_msgr":  {VendorCode: "1060"},         // blocked recipient
	"push_gateway":  {VendorCode: "UNREGISTERED"}, // the device token is gone
	"mailx_email":   {VendorCode: "validation_error"},
	"maily_email":   {VendorCode: "MessageRejected"},
	"mailz_email":   {VendorCode: "406"},               // inactive recipient
	"chata_webhook": {VendorCode: "channel_not_found"}, // 404
	"chata_bot":     {VendorCode: "channel_not_found"},
	"chatb_webhook": {VendorCode: "10015"}, // unknown webhook
	"chatb_bot":     {VendorCode: "10003"}, // unknown channel
}

// FaultFor is the simulator's answer to a test call of provider kind for
// outcome o; first says the call is the request's first vendor call. ok
// is false when the call is accepted.
func FaultFor(kind string, o Outcome, first bool) (f Fault, ok bool) {
	switch o {
	case TempFail:
		if first {
			return Fault{Status: 500}, true
		}
	case PermFail:
		f, ok = permanent[kind]
		if !ok {
			f = Fault{Status: 400}
		}
		return f, true
	}
	return Fault{}, false
}

type faultKey struct{}

// WithFault returns ctx carrying f: the in-process simulator's transport
// answers the call made under it with f.
func WithFault(ctx context.Context, f Fault) context.Context {
	return context.WithValue(ctx, faultKey{}, f)
}

// FaultOf is the fault ctx carries, if any.
func FaultOf(ctx context.Context) (Fault, bool) {
	f, ok := ctx.Value(faultKey{}).(Fault)
	return f, ok
}
