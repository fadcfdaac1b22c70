package resend

import (
	"encoding/json"
	"strings"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider"
)

// errorRule maps a Resend error name, at one HTTP status or at any (0), to a
// failure code. Kept as one table so a correction is a one-line change.
type errorRule struct {
	Status int
	Name   string
	Code   notify.FailureCode
}

// errorRules is Resend's error catalogue (resend.com/docs/api-reference/errors).
// Lookup prefers an exact status match over a status-0 row.
var errorRules = []errorRule{
	// Quotas are the closest Resend has to a balance: another route can
	// still send, so they fall back as credit_exhausted, not the generic 429.
	{429, "daily_quota_exceeded", notify.FailureCreditExhausted},
	{429, "monthly_quota_exceeded", notify.FailureCreditExhausted},
	{0, "rate_limit_exceeded", notify.FailureRateLimited},
	{0, "missing_api_key", notify.FailureUnauthorized},
	{0, "restricted_api_key", notify.FailureUnauthorized},
	{0, "invalid_api_key", notify.FailureUnauthorized},
	// 403 validation_error means an unverified sending domain or a
	// test-mode account sending to someone else: the account's setup is
	// wrong, not the message, so it is unauthorized (as SPEC's 403 rule
	// says), which ends the run like invalid_request but blames the account.
	{403, "validation_error", notify.FailureUnauthorized},
	{0, "validation_error", notify.FailureInvalidRequest},
	{0, "invalid_from_address", notify.FailureInvalidRequest},
	{0, "missing_required_field", notify.FailureInvalidRequest},
	// Idempotency conflicts say nothing about the message: unclassified.
	{409, "invalid_idempotent_request", notify.FailureUnknown},
	{409, "concurrent_idempotent_requests", notify.FailureUnknown},
	{0, "application_error", notify.FailureTemporaryUnavailable},
	{0, "internal_server_error", notify.FailureTemporaryUnavailable},
}

func lookup(status int, name string) (notify.FailureCode, bool) {
	var code notify.FailureCode
	found := false
	for _, r := range errorRules {
		if r.Name != name {
			continue
		}
		if r.Status == status {
			return r.Code, true
		}
		if r.Status == 0 && !found {
			code, found = r.Code, true
		}
	}
	return code, found
}

// classify returns the failure of a Resend call, nil on a 2xx answer.
// perr is provider.Do's transport or status error.
func classify(ex provider.Exchange, body []byte, perr *provider.Error) *provider.Error {
	status, failure, done := provider.Answered(ex, perr)
	if done {
		return failure
	}
	var e struct {
		StatusCode int    `json:"statusCode"`
		Name       string `json:"name"`
		Message    string `json:"message"`
	}
	_ = json.Unmarshal(body, &e)
	if code, ok := lookup(status, e.Name); ok {
		out := provider.Errorf(code, "HTTP %d %s: %s", status, e.Name, strings.TrimSpace(e.Message))
		if perr != nil {
			out.RetryAfter = perr.RetryAfter
		}
		return out
	}
	if perr != nil {
		return perr
	}
	return provider.Errorf(notify.FailureUnknown, "HTTP %d %s: %s", status, e.Name, strings.TrimSpace(e.Message))
}
