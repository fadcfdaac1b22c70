package simulator

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/mail"
	"strconv"
)

// resendStatus maps a Resend error name to its HTTP status.
var resendStatus = map[string]int{
	"rate_limit_exceeded": 429, "daily_quota_exceeded": 429, "monthly_quota_exceeded": 429,
	"missing_api_key": 401, "restricted_api_key": 401, "invalid_api_key": 403,
	"validation_error": 422, "invalid_from_address": 422, "missing_required_field": 422,
	"invalid_idempotency_key": 400, "invalid_idempotent_request": 409, "concurrent_idempotent_requests": 409,
	"not_found": 404, "method_not_allowed": 405, "invalid_attachment": 422,
	"application_error": 500, "internal_server_error": 500,
}

// resendStatusName picks the error name a bare HTTP status stands for.
var resendStatusName = map[int]string{
	400: "validation_error", 401: "missing_api_key", 403: "invalid_api_key", 404: "not_found",
	409: "invalid_idempotent_request", 422: "validation_error", 429: "rate_limit_exceeded",
	500: "application_error",
}

func resendError(w http.ResponseWriter, status int, name, msg string) {
	if status == http.StatusTooManyRequests {
		h := w.Header()
		h.Set("Retry-After", "1")
		h.Set("ratelimit-limit", "2")
		h.Set("ratelimit-remaining", "0")
		h.Set("ratelimit-reset", "1")
	}
	writeJSON(w, status, map[string]any{"statusCode": status, "name": name, "message": msg})
}

func resendFault(w http.ResponseWriter, f *fault) {
	name, status := f.VendorCode, f.Status
	if name == "" {
		name = resendStatusName[status]
		if name == "" {
			name = "application_error"
		}
	}
	if status == 0 {
		status = resendStatus[name]
		if status == 0 {
			status = http.StatusUnprocessableEntity
		}
	}
	msg := f.Message
	if msg == "" {
		msg = "Simulated fault: " + name
		if name == "rate_limit_exceeded" {
			msg = "Too many requests. You can only make 2 requests per second. See rate limit response headers for more information. Or contact support to increase rate limit."
		}
	}
	resendError(w, status, name, msg)
}

// resendAuth requires "Authorization: Bearer <key>"; the key itself cannot
// be checked here.
func resendAuth(w http.ResponseWriter, r *http.Request) bool {
	if _, ok := authToken(r, "Bearer"); !ok {
		resendError(w, http.StatusUnauthorized, "missing_api_key", "Missing API key in the authorization header. Include the following header 'Authorization: Bearer YOUR_API_KEY' in the request.")
		return false
	}
	if k := r.Header.Get("Idempotency-Key"); len(k) > 256 {
		resendError(w, http.StatusBadRequest, "invalid_idempotency_key", "The key must be between 1-256 chars.")
		return false
	}
	return true
}

type resendEmail struct {
	From    string            `json:"from"`
	To      json.RawMessage   `json:"to"`
	Cc      json.RawMessage   `json:"cc"`
	Bcc     json.RawMessage   `json:"bcc"`
	ReplyTo json.RawMessage   `json:"reply_to"`
	Subject string            `json:"subject"`
	HTML    string            `json:"html"`
	Text    string            `json:"text"`
	Headers map[string]string `json:"headers"`
	Tags    []struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	} `json:"tags"`
	Attachments json.RawMessage `json:"attachments"`
	ScheduledAt string          `json:"scheduled_at"`
}

// resendInvalid is a validation failure: status, name, message.
type resendInvalid struct {
	status int
	name   string
	msg    string
}

func validTagPart(s string) bool {
	if s == "" || len(s) > 256 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// check validates one email and returns its recipients.
func (e *resendEmail) check(batch bool) ([]string, *resendInvalid) {
	bad := func(name, format string, args ...any) ([]string, *resendInvalid) {
		return nil, &resendInvalid{http.StatusUnprocessableEntity, name, fmt.Sprintf(format, args...)}
	}
	if e.From == "" {
		return bad("missing_required_field", "Missing `from` field.")
	}
	if _, err := mail.ParseAddress(e.From); err != nil {
		return bad("invalid_from_address", "Invalid `from` field. The email address needs to follow the `email@example.com` or `Name <email@example.com>` format.")
	}
	to, err := stringOrList(e.To)
	if err != nil {
		return bad("validation_error", "Invalid `to` field: %v.", err)
	}
	if len(to) == 0 {
		return bad("missing_required_field", "Missing `to` field.")
	}
	if len(to) > 50 {
		return bad("validation_error", "Invalid `to` field: at most 50 recipients.")
	}
	for _, fld := range []struct {
		name string
		raw  json.RawMessage
	}{{"to", e.To}, {"cc", e.Cc}, {"bcc", e.Bcc}, {"reply_to", e.ReplyTo}} {
		list, err := stringOrList(fld.raw)
		if err != nil {
			return bad("validation_error", "Invalid `%s` field: %v.", fld.name, err)
		}
		for _, a := range list {
			if _, err := mail.ParseAddress(a); err != nil {
				return bad("validation_error", "Invalid `%s` field. The email address needs to follow the `email@example.com` or `Name <email@example.com>` format.", fld.name)
			}
		}
	}
	if e.Subject == "" {
		return bad("missing_required_field", "Missing `subject` field.")
	}
	// Recipients are recorded by bare address so that tests can look them up.
	for i, a := range to {
		addr, _ := mail.ParseAddress(a)
		to[i] = addr.Address
	}
	if e.HTML == "" && e.Text == "" {
		return bad("validation_error", "Missing `html` or `text` field.")
	}
	for _, t := range e.Tags {
		if !validTagPart(t.Name) || !validTagPart(t.Value) {
			return bad("validation_error", "Tags should only contain ASCII letters, numbers, underscores, or dashes.")
		}
	}
	if batch && (len(e.Attachments) > 0 && string(e.Attachments) != "null" || e.ScheduledAt != "") {
		return bad("validation_error", "Attachments and scheduling are not supported in batch sending.")
	}
	return to, nil
}

// messages builds the recorded messages of an accepted email, one per to.
func (e *resendEmail) messages(id string, to []string) []Message {
	h := make(map[string]string, len(e.Headers)+1)
	for k, v := range e.Headers {
		h[k] = v
	}
	if _, ok := h["From"]; !ok {
		h["From"] = e.From
	}
	out := make([]Message, len(to))
	for i, a := range to {
		out[i] = Message{ID: id, To: a, Subject: e.Subject, Text: e.Text, HTML: e.HTML, Headers: h}
	}
	return out
}

func resendDecode(w http.ResponseWriter, r *http.Request, v any) ([]byte, bool) {
	body, err := readBody(r)
	if err != nil {
		resendError(w, http.StatusRequestEntityTooLarge, "validation_error", "Request body too large.")
		return nil, false
	}
	if err := json.Unmarshal(body, v); err != nil {
		resendError(w, http.StatusUnprocessableEntity, "validation_error", "Invalid JSON body: "+err.Error())
		return nil, false
	}
	return body, true
}

// resendSend serves POST /emails.
func (s resendAPI) resendSend(w http.ResponseWriter, r *http.Request) {
	if !resendAuth(w, r) {
		return
	}
	var e resendEmail
	body, ok := resendDecode(w, r, &e)
	if !ok {
		return
	}
	// A repeat of an answered request: the first answer, nothing sent.
	token, _ := authToken(r, "Bearer")
	key := r.Header.Get("Idempotency-Key")
	if key != "" {
		if id, ok, conflict := s.idem.lookup(token, key, body, s.now()); conflict {
			resendError(w, http.StatusConflict, "invalid_idempotent_request", "Same idempotency key used with a different request payload. Change your idempotency key or payload.")
			return
		} else if ok {
			writeJSON(w, http.StatusOK, map[string]string{"id": id})
			return
		}
	}
	if f, aborted := s.takeFault(r, opSend, kindMailX); aborted {
		return
	} else if f != nil {
		resendFault(w, f)
		return
	}
	to, bad := e.check(false)
	if bad != nil {
		resendError(w, bad.status, bad.name, bad.msg)
		return
	}
	id := s.uuid()
	s.record(kindMailX, e.messages(id, to))
	if key != "" {
		s.idem.store(token, key, body, id, s.now())
	}
	writeJSON(w, http.StatusOK, map[string]string{"id": id})
}

// resendBatch serves POST /emails/batch: an array of at most 100 emails,
// validated strictly (default: one bad email refuses all) or permissively
// (x-batch-validation: permissive; data lists the sent ones in input order,
// errors the others by index).
func (s resendAPI) resendBatch(w http.ResponseWriter, r *http.Request) {
	if !resendAuth(w, r) {
		return
	}
	mode := r.Header.Get("x-batch-validation")
	if mode == "" {
		mode = "strict"
	}
	if mode != "strict" && mode != "permissive" {
		resendError(w, http.StatusUnprocessableEntity, "validation_error", "Invalid `x-batch-validation` header: must be strict or permissive.")
		return
	}
	var emails []resendEmail
	if _, ok := resendDecode(w, r, &emails); !ok {
		return
	}
	if len(emails) == 0 || len(emails) > 100 {
		resendError(w, http.StatusUnprocessableEntity, "validation_error", "The batch must contain between 1 and 100 emails.")
		return
	}
	if f, aborted := s.takeFault(r, opSend, kindMailX); aborted {
		return
	} else if f != nil {
		resendFault(w, f)
		return
	}
	type itemErr struct {
		Index   int    `json:"index"`
		Message string `json:"message"`
	}
	tos := make([][]string, len(emails))
	var errs []itemErr
	for i := range emails {
		to, bad := emails[i].check(true)
		if bad == nil {
			tos[i] = to
			continue
		}
		if mode == "strict" {
			resendError(w, bad.status, bad.name, "emails["+strconv.Itoa(i)+"]: "+bad.msg)
			return
		}
		errs = append(errs, itemErr{i, bad.msg})
	}
	data := make([]map[string]string, 0, len(emails))
	var ms []Message
	for i := range emails {
		if tos[i] == nil {
			continue
		}
		id := s.uuid()
		data = append(data, map[string]string{"id": id})
		ms = append(ms, emails[i].messages(id, tos[i])...)
	}
	s.record(kindMailX, ms)
	out := map[string]any{"data": data}
	if mode == "permissive" {
		if errs == nil {
			errs = []itemErr{}
		}
		out["errors"] = errs
	}
	writeJSON(w, http.StatusOK, out)
}
