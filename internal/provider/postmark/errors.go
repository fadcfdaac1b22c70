package postmark

import (
	"encoding/json"
	"strings"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider"
)

// errorCodes maps Postmark API ErrorCodes (postmarkapp.com/developer/api/overview#error-codes)
// to failure codes. Codes not listed go by codeRanges, then unknown.
var errorCodes = map[int]notify.FailureCode{
	10:  notify.FailureUnauthorized,         // bad or missing server token
	100: notify.FailureTemporaryUnavailable, // API offline for maintenance
	300: notify.FailureInvalidRequest,       // invalid email request
	// 405 "not allowed to send": the account ran out of credits, so
	// another route can still deliver.
	405: notify.FailureCreditExhausted,
	406: notify.FailureInvalidRequest, // inactive (bounced, unsubscribed) recipient
	429: notify.FailureRateLimited,
}

// codeRanges covers the rest of the 300-499 block, which is about the
// request itself (sender signature, JSON, size, attachments).
var codeRanges = []struct {
	From, To int
	Code     notify.FailureCode
}{
	{300, 499, notify.FailureInvalidRequest},
}

func codeFor(ec int) notify.FailureCode {
	if c, ok := errorCodes[ec]; ok {
		return c
	}
	for _, r := range codeRanges {
		if ec >= r.From && ec <= r.To {
			return r.Code
		}
	}
	return notify.FailureUnknown
}

func classifyCode(ec int, msg string) *provider.Error {
	return provider.Errorf(codeFor(ec), "ErrorCode %d: %s", ec, strings.TrimSpace(msg))
}

// classifyCall returns the failure of a whole call, nil when the answer is
// a 2xx (whose per-message ErrorCodes the caller reads). A body ErrorCode
// wins over the HTTP status: a 422 with ErrorCode 405 is credit_exhausted.
func classifyCall(ex provider.Exchange, body []byte, perr *provider.Error) *provider.Error {
	status, failure, done := provider.Answered(ex, perr)
	if done {
		return failure
	}
	var r struct {
		ErrorCode *int   `json:"ErrorCode"`
		Message   string `json:"Message"`
	}
	if json.Unmarshal(body, &r) == nil && r.ErrorCode != nil && *r.ErrorCode != 0 {
		e := classifyCode(*r.ErrorCode, r.Message)
		if perr == nil {
			return e
		}
		// An unlisted code says less than SPEC's status rule does.
		if e.Code == notify.FailureUnknown {
			return perr
		}
		e.RetryAfter = perr.RetryAfter
		return e
	}
	if perr != nil {
		return perr
	}
	return provider.Errorf(notify.FailureUnknown, "HTTP %d: %s", status, provider.Snippet(body, 300))
}
