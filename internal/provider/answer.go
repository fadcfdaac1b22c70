package provider

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/notifyd/notifyd/internal/notify"
)

// Reading vendor answers: shapes and fallbacks the adapters share.

// Answered sorts out what every classifier of a call starts with: no
// answer, where the transport error perr is the failure, and a 2xx
// answer, which is no failure. done reports either (with its failure);
// otherwise status is the non-2xx status left to classify.
func Answered(ex Exchange, perr *Error) (status int, failure *Error, done bool) {
	if ex.Response == nil {
		return 0, perr, true
	}
	status = ex.Response.HTTPStatus
	if status >= 200 && status < 300 {
		return status, nil, true
	}
	return status, nil, false
}

// Snippet is a vendor answer as error messages quote it: trimmed, and cut
// to at most max bytes.
func Snippet(body []byte, max int) string {
	s := strings.TrimSpace(string(body))
	if len(s) > max {
		s = s[:max]
	}
	return s
}

// UnlistedStatus classifies a vendor answer absent from an adapter's
// tables: a 4xx is the request's fault (SPEC normalizes other 4xx to
// invalid_request); anything else is unknown, which falls back.
func UnlistedStatus(status int) notify.FailureCode {
	if status >= 400 && status < 500 {
		return notify.FailureInvalidRequest
	}
	return notify.FailureUnknown
}

// FlexString is a value of a vendor answer documented as a string that
// may come as a JSON number (Aligo's ids, Solapi's status codes); null
// reads as "".
type FlexString string

// UnmarshalJSON takes a JSON string, number or null.
func (f *FlexString) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*f = FlexString(s)
		return nil
	}
	if string(b) == "null" {
		*f = ""
		return nil
	}
	*f = FlexString(b)
	return nil
}
