package aligo

import (
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider"
)

// outcome is how the adapter treats one Aligo body code.
type outcome struct {
	code notify.FailureCode
	// final ends the run although code normally falls back.
	final bool
	// refreshToken: the AlimTalk token was refused; mint a new one and
	// resend once before classifying.
	refreshToken bool
}

// codes maps Aligo's failure codes (result_code on the SMS host, code on the
// AlimTalk host) to failure classes. Every row is UNCONFIRMED against
// Aligo's own documents (PROVIDERS.md); a correction is a one-line change
// here. Codes not listed are unknown (falls back).
var codes = map[int64]outcome{
	-201: {code: notify.FailureCreditExhausted, final: true}, // insufficient balance; SPEC: not retryable
	-101: {code: notify.FailureUnauthorized},                 // API key error
	-1:   {code: notify.FailureUnauthorized},                 // "인증 실패" (one test fixture)
	-301: {code: notify.FailureInvalidRequest},               // invalid recipient number
	-302: {code: notify.FailureInvalidRequest},               // invalid / unregistered sender
	-105: {code: notify.FailureInvalidRequest},               // invalid / unregistered sender (other tables)
	-10:  {code: notify.FailureUnknown, refreshToken: true},  // AlimTalk token missing
	-107: {code: notify.FailureUnknown, refreshToken: true},  // AlimTalk token unusable
}

// classify turns a failure code and Aligo's message into a classified error.
func classify(code int64, message string) *provider.Error {
	o, ok := codes[code]
	if !ok {
		o = outcome{code: notify.FailureUnknown}
	}
	e := provider.Errorf(o.code, "aligo code %d: %s", code, message)
	e.Final = o.final
	return e
}
