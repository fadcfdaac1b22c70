package solapi

import (
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider"
)

// outcome is how the adapter treats one Solapi code; accepted means the
// message was taken (code is then unused).
type outcome struct {
	accepted bool
	code     notify.FailureCode
}

var (
	accepted        = outcome{accepted: true}
	creditExhausted = outcome{code: notify.FailureCreditExhausted}
	invalidRequest  = outcome{code: notify.FailureInvalidRequest}
	unauthorized    = outcome{code: notify.FailureUnauthorized}
)

// codes maps Solapi's per-message statusCode and request-level errorCode
// values (PROVIDERS.md vendorb_sms / vendorb_msgr) to outcomes; a
// correction is a one-line change here. Codes not listed are unknown
// (falls back). Insufficient balance falls back: SPEC makes only vendorA's
// -201 final.
var codes = map[string]outcome{
	// Accepted: registered, sent to the carrier, delivered.
	"2000": accepted,
	"3000": accepted,
	"4000": accepted,

	"1030": creditExhausted, // insufficient balance at registration
	"2230": creditExhausted, // insufficient balance at the platform

	"1062": invalidRequest, // unregistered sender number
	"2062": invalidRequest, // unregistered sender number
	"1060": invalidRequest, // blocked recipient
	"1061": invalidRequest, // 080 opt-out recipient
	"2060": invalidRequest, // blocked recipient
	"2061": invalidRequest, // 080 opt-out recipient
	"1010": invalidRequest, // required field missing
	"1011": invalidRequest, // field format
	"3010": invalidRequest, // recipient number format (carrier stage; normally only in reports)

	// Kakao (ATA): 1041 bad pfId, 1042 bad templateId, 1043 text differs
	// from the template, 1044-1052 buttons.
	"1041": invalidRequest,
	"1042": invalidRequest,
	"1043": invalidRequest,
	"1044": invalidRequest,
	"1045": invalidRequest,
	"1046": invalidRequest,
	"1047": invalidRequest,
	"1048": invalidRequest,
	"1049": invalidRequest,
	"1050": invalidRequest,
	"1051": invalidRequest,
	"1052": invalidRequest,
	// Kakao delivery stage: 3101 bad sender key, 3103 mismatch, 3104 not a
	// KakaoTalk user, 3105 unregistered template, 3107 blocked, 3108 outside
	// send hours (3102 and 3106 are in the range but undocumented).
	"3101": invalidRequest,
	"3102": invalidRequest,
	"3103": invalidRequest,
	"3104": invalidRequest,
	"3105": invalidRequest,
	"3106": invalidRequest,
	"3107": invalidRequest,
	"3108": invalidRequest,

	// Request-level errorCode values. The auth ones come with HTTP 403,
	// which provider.Do already classifies; they are listed so the table
	// holds for any status.
	"InvalidAPIKey":         unauthorized,
	"SignatureDoesNotMatch": unauthorized,
	"RequestTimeTooSkewed":  unauthorized,
	"DuplicatedSignature":   unauthorized,
	"ValidationError":       invalidRequest, // HTTP 400 on a malformed body (Solapi API docs)
}

// classified is a code's outcome with the error built, nil when accepted.
type classified struct {
	accepted bool
	err      *provider.Error
}

// classify looks code up and words the error with Solapi's message.
func classify(code, message string) classified {
	o, ok := codes[code]
	if !ok {
		o = outcome{code: notify.FailureUnknown}
	}
	if o.accepted {
		return classified{accepted: true}
	}
	return classified{err: provider.Errorf(o.code, "solapi %s: %s", code, message)}
}
