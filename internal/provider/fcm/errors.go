package fcm

import (
	"encoding/json"
	"strings"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider"
)

// errorCodes maps the FcmError detail's errorCode, and failing that the
// envelope's google.rpc status, to failure codes.
var errorCodes = map[string]notify.FailureCode{
	// FcmError codes.
	"INVALID_ARGUMENT":       notify.FailureInvalidRequest,
	"UNREGISTERED":           notify.FailureInvalidRequest, // the device token is gone
	"SENDER_ID_MISMATCH":     notify.FailureUnauthorized,
	"THIRD_PARTY_AUTH_ERROR": notify.FailureUnauthorized, // APNs or web-push credentials
	"QUOTA_EXCEEDED":         notify.FailureRateLimited,
	"UNAVAILABLE":            notify.FailureTemporaryUnavailable,
	"INTERNAL":               notify.FailureTemporaryUnavailable,
	// google.rpc statuses seen without an FcmError detail.
	"UNAUTHENTICATED":    notify.FailureUnauthorized,
	"PERMISSION_DENIED":  notify.FailureUnauthorized,
	"RESOURCE_EXHAUSTED": notify.FailureRateLimited,
}

// fcmErrorType is the @type of the FcmError detail.
const fcmErrorType = "type.googleapis.com/google.firebase.fcm.v1.FcmError"

// classify returns the failure of a messages:send call (nil on a 2xx
// answer) and the FcmError errorCode when there is one.
func classify(ex provider.Exchange, body []byte, perr *provider.Error) (*provider.Error, string) {
	status, failure, done := provider.Answered(ex, perr)
	if done {
		return failure, ""
	}
	var env struct {
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Status  string `json:"status"`
			Details []struct {
				Type      string `json:"@type"`
				ErrorCode string `json:"errorCode"`
			} `json:"details"`
		} `json:"error"`
	}
	_ = json.Unmarshal(body, &env)
	var errorCode string
	for _, d := range env.Error.Details {
		if d.Type == fcmErrorType && d.ErrorCode != "" {
			errorCode = d.ErrorCode
			break
		}
	}
	name := errorCode
	if name == "" {
		name = env.Error.Status
	}
	code, ok := errorCodes[name]
	if !ok {
		if perr != nil {
			return perr, errorCode
		}
		code = notify.FailureUnknown
	}
	e := provider.Errorf(code, "HTTP %d %s: %s", status, name, strings.TrimSpace(env.Error.Message))
	if perr != nil {
		e.RetryAfter = perr.RetryAfter
	}
	return e, errorCode
}

// oauthErrors maps the token endpoint's OAuth2 error codes (RFC 6749
// section 5.2). All of them blame the service account or its key.
var oauthErrors = map[string]notify.FailureCode{
	"invalid_grant":       notify.FailureUnauthorized,
	"invalid_client":      notify.FailureUnauthorized,
	"unauthorized_client": notify.FailureUnauthorized,
	"invalid_scope":       notify.FailureUnauthorized,
	"access_denied":       notify.FailureUnauthorized,
}

// classifyToken returns the failure of a token call, nil on a 2xx answer.
func classifyToken(ex provider.Exchange, body []byte, perr *provider.Error) *provider.Error {
	status, failure, done := provider.Answered(ex, perr)
	if done {
		return failure
	}
	var oe struct {
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	_ = json.Unmarshal(body, &oe)
	if code, ok := oauthErrors[oe.Error]; ok {
		return provider.Errorf(code, "token endpoint HTTP %d %s: %s", status, oe.Error, strings.TrimSpace(oe.Description))
	}
	if perr != nil {
		return perr
	}
	return provider.Errorf(notify.FailureUnknown, "token endpoint HTTP %d %s: %s", status, oe.Error, strings.TrimSpace(oe.Description))
}
