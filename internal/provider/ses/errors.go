package ses

import (
	"encoding/json"
	"strings"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider"
)

// dailyQuotaMessage tells SES's daily-quota throttle from its rate throttle;
// both come as ThrottlingException.
const dailyQuotaMessage = "Daily message quota exceeded"

// errorTypes maps SES v2 and common AWS error types to failure codes.
var errorTypes = map[string]notify.FailureCode{
	// ThrottlingException carrying dailyQuotaMessage is credit_exhausted
	// (see classify); any other throttle is a rate limit.
	"ThrottlingException":      notify.FailureRateLimited,
	"TooManyRequestsException": notify.FailureRateLimited,
	// The account cannot send for now (limit reached, sending paused,
	// suspended) but the message is fine: fall back to another route like
	// an exhausted balance, rather than end the run as unauthorized.
	"LimitExceededException":    notify.FailureCreditExhausted,
	"SendingPausedException":    notify.FailureCreditExhausted,
	"AccountSuspendedException": notify.FailureCreditExhausted,
	// Credentials.
	"UnrecognizedClientException": notify.FailureUnauthorized,
	"InvalidSignatureException":   notify.FailureUnauthorized,
	"AccessDeniedException":       notify.FailureUnauthorized,
	"ExpiredTokenException":       notify.FailureUnauthorized,
	// Common AWS auth errors; a malformed signature is our account's
	// credentials problem, not the message's.
	"IncompleteSignatureException":        notify.FailureUnauthorized,
	"MissingAuthenticationTokenException": notify.FailureUnauthorized,
	// The message or its sender: recipient rejected, malformed input,
	// unverified MAIL FROM domain, unknown configuration set.
	"MessageRejected":                    notify.FailureInvalidRequest,
	"BadRequestException":                notify.FailureInvalidRequest,
	"MailFromDomainNotVerifiedException": notify.FailureInvalidRequest,
	"NotFoundException":                  notify.FailureInvalidRequest,
}

// errorType extracts the error type of a restJson answer: the
// X-Amzn-ErrorType header ("Type:http://..."), else the body's __type
// ("namespace#Type") or code.
func errorType(headerValue, bodyType, bodyCode string) string {
	t := headerValue
	if t == "" {
		t = bodyType
	}
	if t == "" {
		t = bodyCode
	}
	if i := strings.IndexByte(t, ':'); i >= 0 {
		t = t[:i]
	}
	if i := strings.LastIndexByte(t, '#'); i >= 0 {
		t = t[i+1:]
	}
	return strings.TrimSpace(t)
}

// classify returns the failure of a SendEmail call, nil on a 2xx answer.
// perr is provider.Do's transport or status error.
func classify(ex provider.Exchange, body []byte, perr *provider.Error) *provider.Error {
	status, failure, done := provider.Answered(ex, perr)
	if done {
		return failure
	}
	var b struct {
		Type     string `json:"__type"`
		Code     string `json:"code"`
		Message  string `json:"message"`
		MessageU string `json:"Message"`
	}
	_ = json.Unmarshal(body, &b)
	msg := b.Message
	if msg == "" {
		msg = b.MessageU
	}
	t := errorType(headerValue(ex.Response.Headers, "X-Amzn-Errortype"), b.Type, b.Code)
	code, ok := errorTypes[t]
	if t == "ThrottlingException" && strings.Contains(msg, dailyQuotaMessage) {
		code, ok = notify.FailureCreditExhausted, true
	}
	if !ok {
		if perr != nil {
			return perr
		}
		code = notify.FailureUnknown
	}
	e := provider.Errorf(code, "HTTP %d %s: %s", status, t, strings.TrimSpace(msg))
	if perr != nil {
		e.RetryAfter = perr.RetryAfter
	}
	return e
}

// headerValue reads a header from the flattened response headers, which
// keep Go's canonical names.
func headerValue(h map[string]string, name string) string {
	for k, v := range h {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}
