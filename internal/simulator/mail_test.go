package simulator

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var resendHdr = map[string]string{"Authorization": "Bearer re_123456789"}

func resendMail(to any) map[string]any {
	return map[string]any{
		"from": "Notifyd <noreply@notifyd.io>", "to": to, "subject": "Hello", "html": "<p>Hi</p>", "text": "Hi",
		"headers": map[string]string{"List-Unsubscribe": "<https://x.io/u?t=1>", "List-Unsubscribe-Post": "List-Unsubscribe=One-Click"},
		"tags":    []map[string]string{{"name": "nid", "value": "n-1"}},
	}
}

func TestResendSend(t *testing.T) {
	t.Parallel()
	with := func(mod func(map[string]any)) map[string]any {
		m := resendMail("a@y.com")
		mod(m)
		return m
	}
	tests := []struct {
		name   string
		hdr    map[string]string
		body   any
		status int
		errNm  string
		tos    []string
	}{
		{"single", resendHdr, resendMail("a@y.com"), 200, "", []string{"a@y.com"}},
		{"to list with names", resendHdr, resendMail([]string{"A <a@y.com>", "b@y.com"}), 200, "", []string{"a@y.com", "b@y.com"}},
		{"text only", resendHdr, with(func(m map[string]any) { delete(m, "html") }), 200, "", []string{"a@y.com"}},
		{"no auth", nil, resendMail("a@y.com"), 401, "missing_api_key", nil},
		{"basic auth", map[string]string{"Authorization": "Basic eDp5"}, resendMail("a@y.com"), 401, "missing_api_key", nil},
		{"missing from", resendHdr, with(func(m map[string]any) { delete(m, "from") }), 422, "missing_required_field", nil},
		{"invalid from", resendHdr, with(func(m map[string]any) { m["from"] = "Notifyd noreply" }), 422, "invalid_from_address", nil},
		{"missing to", resendHdr, with(func(m map[string]any) { delete(m, "to") }), 422, "missing_required_field", nil},
		{"invalid to", resendHdr, resendMail("nobody"), 422, "validation_error", nil},
		{"to is a number", resendHdr, resendMail(5), 422, "validation_error", nil},
		{"51 recipients", resendHdr, resendMail(make51()), 422, "validation_error", nil},
		{"invalid cc", resendHdr, with(func(m map[string]any) { m["cc"] = []string{"x"} }), 422, "validation_error", nil},
		{"missing subject", resendHdr, with(func(m map[string]any) { delete(m, "subject") }), 422, "missing_required_field", nil},
		{"no body", resendHdr, with(func(m map[string]any) { delete(m, "html"); delete(m, "text") }), 422, "validation_error", nil},
		{"bad tag", resendHdr, with(func(m map[string]any) { m["tags"] = []map[string]string{{"name": "a b", "value": "c"}} }), 422, "validation_error", nil},
		{"headers not an object of strings", resendHdr, with(func(m map[string]any) { m["headers"] = []string{"X: y"} }), 422, "validation_error", nil},
		{"idempotency key too long", map[string]string{"Authorization": "Bearer re_x", "Idempotency-Key": strings.Repeat("k", 257)}, resendMail("a@y.com"), 400, "invalid_idempotency_key", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			r := e.postJSON("/emails", tc.hdr, tc.body)
			require.Equal(t, tc.status, r.status, "%s", r.body)
			m := r.obj(t)
			if tc.errNm != "" {
				require.Equal(t, tc.errNm, m["name"])
				require.EqualValues(t, tc.status, m["statusCode"])
				require.NotEmpty(t, m["message"])
				require.Empty(t, e.messages("", ""))
				return
			}
			id := m["id"].(string)
			require.Len(t, id, 36)
			ms := e.messages(kindMailX, "")
			var tos []string
			for _, msg := range ms {
				tos = append(tos, msg.To)
				require.Equal(t, id, msg.ID)
				require.Equal(t, "Hello", msg.Subject)
				require.Equal(t, "Notifyd <noreply@notifyd.io>", msg.Headers["From"])
				require.Equal(t, "<https://x.io/u?t=1>", msg.Headers["List-Unsubscribe"])
				require.Equal(t, "List-Unsubscribe=One-Click", msg.Headers["List-Unsubscribe-Post"])
			}
			require.Equal(t, tc.tos, tos)
		})
	}
}

func make51() []string {
	out := make([]string, 51)
	for i := range out {
		out[i] = fmt.Sprintf("u%d@y.com", i)
	}
	return out
}

func TestResendBatch(t *testing.T) {
	t.Parallel()
	bad := resendMail("nobody")
	tests := []struct {
		name   string
		mode   string
		body   any
		status int
		ids    int
		errs   []float64
	}{
		{"strict all valid", "", []any{resendMail("a@y.com"), resendMail("b@y.com")}, 200, 2, nil},
		{"strict explicit", "strict", []any{resendMail("a@y.com")}, 200, 1, nil},
		{"strict refuses all on one bad", "strict", []any{resendMail("a@y.com"), bad}, 422, 0, nil},
		{"permissive sends the valid", "permissive", []any{resendMail("a@y.com"), bad, resendMail("c@y.com")}, 200, 2, []float64{1}},
		{"permissive all valid lists no errors", "permissive", []any{resendMail("a@y.com")}, 200, 1, []float64{}},
		{"unknown mode", "lenient", []any{resendMail("a@y.com")}, 422, 0, nil},
		{"empty", "", []any{}, 422, 0, nil},
		{"over 100", "", make([]any, 101), 422, 0, nil},
		{"not an array", "", resendMail("a@y.com"), 422, 0, nil},
		{"attachments not allowed", "", []any{func() map[string]any {
			m := resendMail("a@y.com")
			m["attachments"] = []map[string]string{{"filename": "a.txt", "content": "eA=="}}
			return m
		}()}, 422, 0, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			hdr := map[string]string{"Authorization": "Bearer re_x"}
			if tc.mode != "" {
				hdr["x-batch-validation"] = tc.mode
			}
			r := e.postJSON("/emails/batch", hdr, tc.body)
			require.Equal(t, tc.status, r.status, "%s", r.body)
			m := r.obj(t)
			if tc.status != 200 {
				require.Equal(t, "validation_error", m["name"])
				require.Empty(t, e.messages("", ""))
				return
			}
			data := m["data"].([]any)
			require.Len(t, data, tc.ids)
			ms := e.messages(kindMailX, "")
			require.Len(t, ms, tc.ids)
			for i, d := range data {
				require.Equal(t, d.(map[string]any)["id"], ms[i].ID, "data in input order")
			}
			if tc.errs == nil {
				require.NotContains(t, m, "errors")
				return
			}
			var idx []float64
			for _, er := range m["errors"].([]any) {
				idx = append(idx, er.(map[string]any)["index"].(float64))
				require.NotEmpty(t, er.(map[string]any)["message"])
			}
			if len(tc.errs) == 0 {
				require.Empty(t, idx)
			} else {
				require.Equal(t, tc.errs, idx)
			}
		})
	}
}

func TestResendFaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		fault  map[string]any
		path   string
		status int
		errNm  string
	}{
		{"429 rate limit", map[string]any{"kind": "mailx_email", "status": 429}, "/emails", 429, "rate_limit_exceeded"},
		{"daily quota", map[string]any{"kind": "mailx_email", "vendorCode": "daily_quota_exceeded"}, "/emails", 429, "daily_quota_exceeded"},
		{"invalid key", map[string]any{"kind": "mailx_email", "vendorCode": "invalid_api_key"}, "/emails", 403, "invalid_api_key"},
		{"500", map[string]any{"kind": "mailx_email", "status": 500}, "/emails", 500, "application_error"},
		{"401", map[string]any{"kind": "mailx_email", "status": 401}, "/emails", 401, "missing_api_key"},
		{"batch 429", map[string]any{"kind": "mailx_email", "status": 429}, "/emails/batch", 429, "rate_limit_exceeded"},
		{"batch validation_error", map[string]any{"kind": "mailx_email", "vendorCode": "validation_error", "status": 403}, "/emails/batch", 403, "validation_error"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.fault(tc.fault)
			var body any = resendMail("a@y.com")
			if tc.path == "/emails/batch" {
				body = []any{body, resendMail("b@y.com")}
			}
			r := e.postJSON(tc.path, resendHdr, body)
			require.Equal(t, tc.status, r.status, "%s", r.body)
			m := r.obj(t)
			require.Equal(t, tc.errNm, m["name"])
			require.EqualValues(t, tc.status, m["statusCode"])
			if tc.status == 429 {
				require.Equal(t, "1", r.header.Get("Retry-After"))
				require.Equal(t, "0", r.header.Get("ratelimit-remaining"))
			}
			require.Empty(t, e.messages("", ""))
		})
	}
}

// ---- SES v2 ----

func sesMail() map[string]any {
	return map[string]any{
		"FromEmailAddress": "=?UTF-8?B?7ZmN6ri464+Z?= <noreply@notifyd.io>",
		"Destination":      map[string]any{"ToAddresses": []string{"a@y.com"}},
		"Content": map[string]any{"Simple": map[string]any{
			"Subject": map[string]string{"Data": "Hello", "Charset": "UTF-8"},
			"Body":    map[string]any{"Text": map[string]string{"Data": "Hi"}, "Html": map[string]string{"Data": "<p>Hi</p>"}},
			"Headers": []map[string]string{{"Name": "List-Unsubscribe", "Value": "<https://x.io/u>"}},
		}},
		"ConfigurationSetName": "notifyd",
	}
}

func TestSESAuth(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	now := time.Now()
	good := sigv4(now, "ap-northeast-2")
	withAuth := func(auth string) map[string]string {
		return map[string]string{"X-Amz-Date": good["X-Amz-Date"], "Authorization": auth}
	}
	day := good["X-Amz-Date"][:8]
	sig := strings.Repeat("a", 64)
	tests := []struct {
		name string
		hdr  map[string]string
		typ  string
	}{
		{"valid", good, ""},
		{"valid with session token signed", withAuth("AWS4-HMAC-SHA256 Credential=AKID/" + day + "/us-east-1/ses/aws4_request, SignedHeaders=host;x-amz-date;x-amz-security-token, Signature=" + sig), ""},
		{"no header", map[string]string{"X-Amz-Date": good["X-Amz-Date"]}, "MissingAuthenticationTokenException"},
		{"other scheme", withAuth("AWS AKID:abc"), "IncompleteSignatureException"},
		{"no Signature", withAuth("AWS4-HMAC-SHA256 Credential=AKID/" + day + "/us-east-1/ses/aws4_request, SignedHeaders=host;x-amz-date"), "IncompleteSignatureException"},
		{"short credential", withAuth("AWS4-HMAC-SHA256 Credential=AKID/" + day + "/ses/aws4_request, SignedHeaders=host;x-amz-date, Signature=" + sig), "IncompleteSignatureException"},
		{"wrong service", withAuth("AWS4-HMAC-SHA256 Credential=AKID/" + day + "/us-east-1/email/aws4_request, SignedHeaders=host;x-amz-date, Signature=" + sig), "InvalidSignatureException"},
		{"host not signed", withAuth("AWS4-HMAC-SHA256 Credential=AKID/" + day + "/us-east-1/ses/aws4_request, SignedHeaders=x-amz-date, Signature=" + sig), "InvalidSignatureException"},
		{"unsorted signed headers", withAuth("AWS4-HMAC-SHA256 Credential=AKID/" + day + "/us-east-1/ses/aws4_request, SignedHeaders=x-amz-date;host, Signature=" + sig), "InvalidSignatureException"},
		{"upper-case signature", withAuth("AWS4-HMAC-SHA256 Credential=AKID/" + day + "/us-east-1/ses/aws4_request, SignedHeaders=host;x-amz-date, Signature=" + strings.Repeat("A", 64)), "IncompleteSignatureException"},
		{"no X-Amz-Date", map[string]string{"Authorization": good["Authorization"]}, "IncompleteSignatureException"},
		{"bad X-Amz-Date", map[string]string{"Authorization": good["Authorization"], "X-Amz-Date": now.UTC().Format(time.RFC3339)}, "IncompleteSignatureException"},
		{"credential day differs", withAuth("AWS4-HMAC-SHA256 Credential=AKID/20200101/us-east-1/ses/aws4_request, SignedHeaders=host;x-amz-date, Signature=" + sig), "InvalidSignatureException"},
		{"expired", sigv4(now.Add(-20*time.Minute), "us-east-1"), "InvalidSignatureException"},
		{"not yet current", sigv4(now.Add(20*time.Minute), "us-east-1"), "InvalidSignatureException"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := e.postJSON("/v2/email/outbound-emails", tc.hdr, sesMail())
			if tc.typ == "" {
				require.Equal(t, http.StatusOK, r.status, "%s", r.body)
				return
			}
			require.Equal(t, http.StatusForbidden, r.status, "%s", r.body)
			require.Equal(t, tc.typ, r.header.Get("X-Amzn-ErrorType"))
			require.NotEmpty(t, r.obj(t)["message"])
		})
	}
}

func TestSESSend(t *testing.T) {
	t.Parallel()
	with := func(mod func(map[string]any)) map[string]any {
		m := sesMail()
		mod(m)
		return m
	}
	simple := func(m map[string]any) map[string]any { return m["Content"].(map[string]any)["Simple"].(map[string]any) }
	raw := "From: Shop <shop@x.io>\r\nTo: r@y.com\r\nSubject: =?UTF-8?B?7ZmN6ri464+Z?=\r\nContent-Type: text/plain\r\n\r\nraw body"
	tests := []struct {
		name   string
		body   any
		status int
		tos    []string
	}{
		{"simple", sesMail(), 200, []string{"a@y.com"}},
		{"to, cc and bcc", with(func(m map[string]any) {
			m["Destination"] = map[string]any{"ToAddresses": []string{"a@y.com", "B <b@y.com>"}, "CcAddresses": []string{"c@y.com"}, "BccAddresses": []string{"d@y.com"}}
		}), 200, []string{"a@y.com", "b@y.com", "c@y.com", "d@y.com"}},
		{"raw", map[string]any{"Content": map[string]any{"Raw": map[string]any{"Data": base64.StdEncoding.EncodeToString([]byte(raw))}}}, 200, []string{"r@y.com"}},
		{"template", with(func(m map[string]any) {
			m["Content"] = map[string]any{"Template": map[string]any{"TemplateName": "welcome", "TemplateData": `{"n":"1"}`}}
		}), 200, []string{"a@y.com"}},
		{"raw non-ASCII from name", with(func(m map[string]any) { m["FromEmailAddress"] = "홍길동 <noreply@notifyd.io>" }), 400, nil},
		{"missing from", with(func(m map[string]any) { delete(m, "FromEmailAddress") }), 400, nil},
		{"illegal to", with(func(m map[string]any) { m["Destination"] = map[string]any{"ToAddresses": []string{"nobody"}} }), 400, nil},
		{"no destination", with(func(m map[string]any) { delete(m, "Destination") }), 400, nil},
		{"51 recipients", with(func(m map[string]any) { m["Destination"] = map[string]any{"ToAddresses": make51()} }), 400, nil},
		{"no subject", with(func(m map[string]any) { delete(simple(m), "Subject") }), 400, nil},
		{"no body", with(func(m map[string]any) { simple(m)["Body"] = map[string]any{} }), 400, nil},
		{"no content", with(func(m map[string]any) { delete(m, "Content") }), 400, nil},
		{"simple and raw", with(func(m map[string]any) { m["Content"].(map[string]any)["Raw"] = map[string]any{"Data": "eA=="} }), 400, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			r := e.postJSON("/v2/email/outbound-emails", sigv4(time.Now(), "us-east-1"), tc.body)
			require.Equal(t, tc.status, r.status, "%s", r.body)
			if tc.status != 200 {
				require.Equal(t, "BadRequestException", r.header.Get("X-Amzn-ErrorType"))
				require.NotEmpty(t, r.obj(t)["message"])
				require.Empty(t, e.messages("", ""))
				return
			}
			id := r.obj(t)["MessageId"].(string)
			require.True(t, strings.HasSuffix(id, "-000000"), id)
			ms := e.messages(kindMailY, "")
			var tos []string
			for _, m := range ms {
				tos = append(tos, m.To)
				require.Equal(t, id, m.ID)
			}
			require.Equal(t, tc.tos, tos)
			switch tc.name {
			case "simple":
				m := ms[0]
				require.Equal(t, "Hello", m.Subject)
				require.Equal(t, "Hi", m.Text)
				require.Equal(t, "<p>Hi</p>", m.HTML)
				require.Equal(t, "홍길동 <noreply@notifyd.io>", m.Headers["From"], "encoded-word decoded")
				require.Equal(t, "<https://x.io/u>", m.Headers["List-Unsubscribe"])
				require.Equal(t, "notifyd", m.Headers["X-SES-CONFIGURATION-SET"])
			case "raw":
				require.Equal(t, "홍길동", ms[0].Subject)
				require.Equal(t, "raw body", ms[0].Text)
			}
		})
	}
}

func TestSESFaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		fault  map[string]any
		status int
		typ    string
		msg    string
	}{
		{"MessageRejected", map[string]any{"kind": "maily_email", "vendorCode": "MessageRejected"}, 400, "MessageRejected", "not verified"},
		{"daily quota", map[string]any{"kind": "maily_email", "vendorCode": "ThrottlingException", "message": "Daily message quota exceeded."}, 400, "ThrottlingException", "Daily message quota exceeded."},
		{"TooManyRequests", map[string]any{"kind": "maily_email", "vendorCode": "TooManyRequestsException"}, 429, "TooManyRequestsException", ""},
		{"429 status", map[string]any{"kind": "maily_email", "status": 429}, 429, "TooManyRequestsException", ""},
		{"500 status", map[string]any{"kind": "maily_email", "status": 500}, 500, "InternalFailure", ""},
		{"403 status", map[string]any{"kind": "maily_email", "status": 403}, 403, "UnrecognizedClientException", ""},
		{"NotFound", map[string]any{"kind": "maily_email", "vendorCode": "NotFoundException"}, 404, "NotFoundException", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.fault(tc.fault)
			r := e.postJSON("/v2/email/outbound-emails", sigv4(time.Now(), "us-east-1"), sesMail())
			require.Equal(t, tc.status, r.status, "%s", r.body)
			require.Equal(t, tc.typ, r.header.Get("X-Amzn-ErrorType"))
			msg := r.obj(t)["message"].(string)
			require.Contains(t, msg, tc.msg)
			if tc.status == 429 {
				require.Equal(t, "1", r.header.Get("Retry-After"))
			}
			require.Empty(t, e.messages("", ""))
		})
	}
}

// ---- Postmark ----

var pmAuth = map[string]string{"X-Postmark-Server-Token": "server-token", "Accept": "application/json"}

func pmMail(to string) map[string]any {
	return map[string]any{
		"From": "Notifyd <noreply@notifyd.io>", "To": to, "Subject": "Hello", "HtmlBody": "<p>Hi</p>", "TextBody": "Hi",
		"MessageStream": "outbound", "Tag": "otp", "Metadata": map[string]string{"nid": "n-1"},
		"Headers": []map[string]string{{"Name": "List-Unsubscribe", "Value": "<https://x.io/u>"}},
	}
}

func TestPostmarkSend(t *testing.T) {
	t.Parallel()
	with := func(mod func(map[string]any)) map[string]any {
		m := pmMail("a@y.com")
		mod(m)
		return m
	}
	tests := []struct {
		name   string
		hdr    map[string]string
		body   any
		status int
		code   float64
		tos    []string
	}{
		{"single", pmAuth, pmMail("a@y.com"), 200, 0, []string{"a@y.com"}},
		{"two recipients", pmAuth, pmMail("a@y.com, B <b@y.com>"), 200, 0, []string{"a@y.com", "b@y.com"}},
		{"no token", nil, pmMail("a@y.com"), 401, 10, nil},
		{"headers as an object", pmAuth, with(func(m map[string]any) { m["Headers"] = map[string]string{"X": "y"} }), 422, 402, nil},
		{"not JSON", pmAuth, []byte("{"), 422, 402, nil},
		{"missing From", pmAuth, with(func(m map[string]any) { delete(m, "From") }), 422, 300, nil},
		{"bad From", pmAuth, with(func(m map[string]any) { m["From"] = "noreply" }), 422, 300, nil},
		{"missing To", pmAuth, with(func(m map[string]any) { delete(m, "To") }), 422, 300, nil},
		{"bad To", pmAuth, pmMail("nobody"), 422, 300, nil},
		{"no body", pmAuth, with(func(m map[string]any) { delete(m, "HtmlBody"); delete(m, "TextBody") }), 422, 300, nil},
		{"51 recipients", pmAuth, pmMail(strings.Join(make51(), ",")), 422, 300, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			r := e.postJSON("/email", tc.hdr, tc.body)
			require.Equal(t, tc.status, r.status, "%s", r.body)
			m := r.obj(t)
			require.Equal(t, tc.code, m["ErrorCode"])
			require.NotEmpty(t, m["Message"])
			if tc.status != 200 {
				require.Empty(t, e.messages("", ""))
				return
			}
			require.Equal(t, "OK", m["Message"])
			require.Equal(t, tc.body.(map[string]any)["To"], m["To"])
			_, err := time.Parse(time.RFC3339Nano, m["SubmittedAt"].(string))
			require.NoError(t, err)
			var tos []string
			for _, msg := range e.messages(kindMailZ, "") {
				tos = append(tos, msg.To)
				require.Equal(t, m["MessageID"], msg.ID)
				require.Equal(t, "Notifyd <noreply@notifyd.io>", msg.Headers["From"])
				require.Equal(t, "<https://x.io/u>", msg.Headers["List-Unsubscribe"])
				require.Equal(t, "outbound", msg.Headers["X-PM-Message-Stream"])
				require.Equal(t, "n-1", msg.Headers["X-PM-Metadata-nid"])
				require.Equal(t, "Hi", msg.Text)
				require.Equal(t, "<p>Hi</p>", msg.HTML)
			}
			require.Equal(t, tc.tos, tos)
		})
	}
}

func TestPostmarkBatch(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.postJSON("/email/batch", pmAuth, []any{pmMail("a@y.com"), pmMail("nobody"), pmMail("c@y.com")})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	res := r.list(t)
	require.Len(t, res, 3)
	require.EqualValues(t, 0, res[0].(map[string]any)["ErrorCode"])
	require.EqualValues(t, 300, res[1].(map[string]any)["ErrorCode"])
	require.NotContains(t, res[1].(map[string]any), "MessageID")
	require.EqualValues(t, 0, res[2].(map[string]any)["ErrorCode"])
	ms := e.messages(kindMailZ, "")
	require.Len(t, ms, 2)
	require.Equal(t, res[0].(map[string]any)["MessageID"], ms[0].ID)
	require.Equal(t, res[2].(map[string]any)["MessageID"], ms[1].ID)

	for _, body := range []any{[]any{}, make([]any, 501), pmMail("a@y.com")} {
		r := e.postJSON("/email/batch", pmAuth, body)
		require.Equal(t, http.StatusUnprocessableEntity, r.status, "%s", r.body)
	}
}

func TestPostmarkFaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		fault  map[string]any
		batch  bool
		status int
		code   float64 // request-level ErrorCode; -1 for an HTML page
		slot   float64 // per-message ErrorCode in a batch
	}{
		{"405 out of credits", map[string]any{"kind": "mailz_email", "vendorCode": 405}, false, 422, 405, 0},
		{"10 bad token", map[string]any{"kind": "mailz_email", "vendorCode": "10"}, false, 401, 10, 0},
		{"429 status", map[string]any{"kind": "mailz_email", "status": 429}, false, 429, 429, 0},
		{"500 status", map[string]any{"kind": "mailz_email", "status": 500}, false, 500, -1, 0},
		{"406 single", map[string]any{"kind": "mailz_email", "vendorCode": 406}, false, 422, 406, 0},
		{"406 in a batch fails each slot", map[string]any{"kind": "mailz_email", "vendorCode": 406}, true, 200, 0, 406},
		{"405 in a batch fails the request", map[string]any{"kind": "mailz_email", "vendorCode": 405}, true, 422, 405, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.fault(tc.fault)
			var r *resp
			if tc.batch {
				r = e.postJSON("/email/batch", pmAuth, []any{pmMail("a@y.com"), pmMail("b@y.com")})
			} else {
				r = e.postJSON("/email", pmAuth, pmMail("a@y.com"))
			}
			require.Equal(t, tc.status, r.status, "%s", r.body)
			switch {
			case tc.slot != 0:
				for _, it := range r.list(t) {
					require.Equal(t, tc.slot, it.(map[string]any)["ErrorCode"])
				}
			case tc.code == -1:
				require.Contains(t, string(r.body), "<html>")
			default:
				require.Equal(t, tc.code, r.obj(t)["ErrorCode"])
			}
			if tc.status == 429 {
				require.Equal(t, "1", r.header.Get("Retry-After"))
			}
			require.Empty(t, e.messages("", ""))
		})
	}
}

// TestResendIdempotencyKey: a repeat of a sent email with the same
// Idempotency-Key and body answers the first id and sends nothing; the
// key with another body is a 409; another API key has its own keys.
func TestResendIdempotencyKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	hdr := map[string]string{"Authorization": "Bearer re_team1", "Idempotency-Key": "req-1:1:acc"}
	first := e.postJSON("/emails", hdr, resendMail("a@y.com"))
	require.Equal(t, 200, first.status, "%s", first.body)
	again := e.postJSON("/emails", hdr, resendMail("a@y.com"))
	require.Equal(t, 200, again.status, "%s", again.body)
	require.Equal(t, first.obj(t)["id"], again.obj(t)["id"])
	require.Len(t, e.messages(kindMailX, ""), 1, "the repeat sent nothing")

	other := e.postJSON("/emails", hdr, resendMail("b@y.com"))
	require.Equal(t, 409, other.status, "%s", other.body)
	require.Equal(t, "invalid_idempotent_request", other.obj(t)["name"])

	team2 := map[string]string{"Authorization": "Bearer re_team2", "Idempotency-Key": "req-1:1:acc"}
	require.Equal(t, 200, e.postJSON("/emails", team2, resendMail("a@y.com")).status)
	noKey := map[string]string{"Authorization": "Bearer re_team1"}
	require.Equal(t, 200, e.postJSON("/emails", noKey, resendMail("a@y.com")).status)
	require.Len(t, e.messages(kindMailX, ""), 3)
}
