package notify

// Channel is a delivery channel of a notification request.
type Channel string

// The eight channel values of SPEC "What the service does".
const (
	ChannelSMS          Channel = "sms"
	ChannelAlimTalk     Channel = "msgr_alimtalk"
	ChannelEmail        Channel = "email"
	ChannelPush         Channel = "push_mobile"
	ChannelChatAWebhook Channel = "chata_webhook"
	ChannelChatBWebhook Channel = "chatb_webhook"
	ChannelChatABot     Channel = "chata_bot"
	ChannelChatBBot     Channel = "chatb_bot"
)

// ChannelInApp is the in-app inbox (issue 33): delivering stores the
// message in a recipient profile's inbox and wakes its open streams; it
// has no provider, account or route (docs/DECISIONS.md "The inapp
// channel").
const ChannelInApp Channel = "inapp"

// Channels lists the channel values of SPEC in the order SPEC names them:
// the channels delivered through provider accounts and routes. The
// refusals that list the channels name these (their wording is SPEC's).
var Channels = []Channel{
	ChannelSMS, ChannelAlimTalk, ChannelEmail, ChannelPush,
	ChannelChatAWebhook, ChannelChatBWebhook, ChannelChatABot, ChannelChatBBot,
}

// AllChannels are SPEC's channels and the in-app inbox: every value a
// send, a template, a category or a preference may name.
var AllChannels = append(append([]Channel{}, Channels...), ChannelInApp)

// Valid reports whether c is one of the channel values.
func (c Channel) Valid() bool {
	for _, v := range AllChannels {
		if v == c {
			return true
		}
	}
	return false
}

// FailureCode classifies a failed provider attempt (SPEC "Fallback classification").
type FailureCode string

// The failure codes of an attempt record.
const (
	FailureCreditExhausted      FailureCode = "credit_exhausted"
	FailureRateLimited          FailureCode = "rate_limited"
	FailureTemporaryUnavailable FailureCode = "temporary_unavailable"
	FailureInvalidRequest       FailureCode = "invalid_request"
	FailureUnauthorized         FailureCode = "unauthorized"
	FailureUnsupportedChannel   FailureCode = "unsupported_channel"
	FailureUnknown              FailureCode = "unknown"
	FailureCircuitOpen          FailureCode = "circuit_open"
)

// FallsBack reports whether a failure of this class moves on to the next
// route. Some vendor answers end the run despite a falling-back class (vendorA
// -201 is credit_exhausted but final); the provider error carries that.
func (c FailureCode) FallsBack() bool {
	switch c {
	case FailureCreditExhausted, FailureRateLimited, FailureTemporaryUnavailable,
		FailureUnknown, FailureCircuitOpen:
		return true
	}
	return false
}
