package simulator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/mail"
	"sort"
	"strings"
	"time"
)

const (
	sesDateFormat = "20060102T150405Z"
	sesSkew       = 15 * time.Minute
)

// sesStatus maps an SES v2 error type to its HTTP status. ThrottlingException
// is 400 as in SES v1 (PROVIDERS.md: v2 status UNCONFIRMED).
var sesStatus = map[string]int{
	"MessageRejected": 400, "BadRequestException": 400, "MailFromDomainNotVerifiedException": 400,
	"ThrottlingException": 400, "LimitExceededException": 400, "SendingPausedException": 400,
	"AccountSuspendedException": 400, "TooManyRequestsException": 429, "NotFoundException": 404,
	"UnrecognizedClientException": 403, "InvalidSignatureException": 403, "AccessDeniedException": 403,
	"ExpiredTokenException": 403, "IncompleteSignatureException": 403, "MissingAuthenticationTokenException": 403,
	"InternalFailure": 500, "ServiceUnavailable": 503,
}

// sesStatusType picks the error type a bare HTTP status stands for.
var sesStatusType = map[int]string{
	400: "BadRequestException", 401: "UnrecognizedClientException", 403: "UnrecognizedClientException",
	404: "NotFoundException", 429: "TooManyRequestsException", 500: "InternalFailure", 503: "ServiceUnavailable",
}

var sesMessages = map[string]string{
	"ThrottlingException":         "Maximum sending rate exceeded.",
	"TooManyRequestsException":    "Too Many Requests",
	"MessageRejected":             "Email address is not verified. The following identities failed the check in region US-EAST-1: recipient",
	"UnrecognizedClientException": "The security token included in the request is invalid.",
	"InvalidSignatureException":   "The request signature we calculated does not match the signature you provided.",
	"AccountSuspendedException":   "Your account has been suspended.",
	"SendingPausedException":      "Sending is paused for this account.",
}

// sesError answers in the restJson error format of AWS: the type in
// X-Amzn-ErrorType, the text in {"message"}.
func (s sesAPI) sesError(w http.ResponseWriter, status int, typ, msg string) {
	h := w.Header()
	h.Set("X-Amzn-ErrorType", typ)
	h.Set("x-amzn-RequestId", s.uuid())
	if status == http.StatusTooManyRequests {
		h.Set("Retry-After", "1")
	}
	writeJSON(w, status, map[string]string{"message": msg})
}

func (s sesAPI) sesFault(w http.ResponseWriter, f *fault) {
	typ, status := f.VendorCode, f.Status
	if typ == "" {
		typ = sesStatusType[status]
		if typ == "" {
			typ = "InternalFailure"
		}
	}
	if status == 0 {
		status = sesStatus[typ]
		if status == 0 {
			status = http.StatusBadRequest
		}
	}
	msg := f.Message
	if msg == "" {
		msg = sesMessages[typ]
		if msg == "" {
			msg = "Simulated fault: " + typ
		}
	}
	s.sesError(w, status, typ, msg)
}

// sesAuthError checks the shape of a Signature V4 header for service ses
// and X-Amz-Date. The secret is unknown, so the signature is checked for
// form only. It returns the error type and message, or "" when valid.
func (s sesAPI) sesAuthError(r *http.Request) (string, string) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return "MissingAuthenticationTokenException", "Missing Authentication Token"
	}
	scheme, rest, _ := strings.Cut(h, " ")
	if scheme != "AWS4-HMAC-SHA256" {
		return "IncompleteSignatureException", "Unsupported authorization type: " + scheme
	}
	params := map[string]string{}
	for _, p := range strings.Split(rest, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
		if !ok {
			return "IncompleteSignatureException", "Authorization header requires 'Credential', 'SignedHeaders' and 'Signature' parameters (key=value, comma-separated): " + h
		}
		params[k] = v
	}
	for _, k := range []string{"Credential", "SignedHeaders", "Signature"} {
		if params[k] == "" {
			return "IncompleteSignatureException", "Authorization header requires '" + k + "' parameter. Authorization=" + h
		}
	}
	cred := strings.Split(params["Credential"], "/")
	if len(cred) != 5 || cred[0] == "" || cred[2] == "" || cred[4] != "aws4_request" {
		return "IncompleteSignatureException", "Credential must be <access key>/<yyyymmdd>/<region>/ses/aws4_request, got " + params["Credential"]
	}
	if _, err := time.Parse("20060102", cred[1]); err != nil {
		return "IncompleteSignatureException", "Credential date must be yyyymmdd, got " + cred[1]
	}
	if cred[3] != "ses" {
		return "InvalidSignatureException", "Credential should be scoped to correct service: 'ses'."
	}
	signed := strings.Split(params["SignedHeaders"], ";")
	if !sort.StringsAreSorted(signed) {
		return "InvalidSignatureException", "SignedHeaders must be sorted: " + params["SignedHeaders"]
	}
	has := map[string]bool{}
	for _, sh := range signed {
		if sh == "" || sh != strings.ToLower(sh) {
			return "InvalidSignatureException", "SignedHeaders must be lower-case names: " + params["SignedHeaders"]
		}
		has[sh] = true
	}
	if !has["host"] {
		return "InvalidSignatureException", "'Host' must be a signed header."
	}
	if !isLowerHex(params["Signature"], 64) {
		return "IncompleteSignatureException", "Signature must be 64 lower-case hex digits."
	}
	amzDate := r.Header.Get("X-Amz-Date")
	if amzDate == "" {
		return "IncompleteSignatureException", "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header."
	}
	if !has["x-amz-date"] {
		return "InvalidSignatureException", "'X-Amz-Date' must be a signed header."
	}
	t, err := time.Parse(sesDateFormat, amzDate)
	if err != nil {
		return "IncompleteSignatureException", "X-Amz-Date must be in ISO 8601 basic format (yyyymmddThhmmssZ), got " + amzDate
	}
	if amzDate[:8] != cred[1] {
		return "InvalidSignatureException", "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '" + cred[1] + "' != '" + amzDate[:8] + "'"
	}
	now := s.now().UTC()
	if t.Before(now.Add(-sesSkew)) {
		return "InvalidSignatureException", fmt.Sprintf("Signature expired: %s is now earlier than %s (%s - 15 min.)", amzDate, now.Add(-sesSkew).Format(sesDateFormat), now.Format(sesDateFormat))
	}
	if t.After(now.Add(sesSkew)) {
		return "InvalidSignatureException", fmt.Sprintf("Signature not yet current: %s is still later than %s (%s + 15 min.)", amzDate, now.Add(sesSkew).Format(sesDateFormat), now.Format(sesDateFormat))
	}
	return "", ""
}

type sesText struct {
	Data    string `json:"Data"`
	Charset string `json:"Charset"`
}

type sesRequest struct {
	FromEmailAddress string `json:"FromEmailAddress"`
	Destination      *struct {
		ToAddresses  []string `json:"ToAddresses"`
		CcAddresses  []string `json:"CcAddresses"`
		BccAddresses []string `json:"BccAddresses"`
	} `json:"Destination"`
	ReplyToAddresses []string `json:"ReplyToAddresses"`
	Content          *struct {
		Simple   *sesSimple `json:"Simple"`
		Raw      *sesRaw    `json:"Raw"`
		Template *struct {
			TemplateName string `json:"TemplateName"`
			TemplateArn  string `json:"TemplateArn"`
			TemplateData string `json:"TemplateData"`
		} `json:"Template"`
	} `json:"Content"`
	ConfigurationSetName string `json:"ConfigurationSetName"`
	EmailTags            []struct {
		Name  string `json:"Name"`
		Value string `json:"Value"`
	} `json:"EmailTags"`
}

type sesSimple struct {
	Subject *sesText `json:"Subject"`
	Body    *struct {
		Text *sesText `json:"Text"`
		HTML *sesText `json:"Html"`
	} `json:"Body"`
	Headers []struct {
		Name  string `json:"Name"`
		Value string `json:"Value"`
	} `json:"Headers"`
}

type sesRaw struct {
	Data []byte `json:"Data"`
}

// sesAddress validates one address. SES wants non-ASCII display names
// MIME-encoded (RFC 2047) and domains in punycode, so raw non-ASCII is
// refused. net/mail decodes an encoded display name.
func sesAddress(field, a string) (*mail.Address, string) {
	for i := 0; i < len(a); i++ {
		if a[i] >= 0x80 {
			return nil, field + " contains non-ASCII characters; encode the display name as an RFC 2047 encoded-word: " + a
		}
	}
	addr, err := mail.ParseAddress(a)
	if err != nil {
		return nil, "Illegal address in " + field + ": " + a
	}
	return addr, ""
}

// displayAddress formats an address with its decoded display name.
func displayAddress(a *mail.Address) string {
	if a.Name == "" {
		return a.Address
	}
	return a.Name + " <" + a.Address + ">"
}

// sesSend serves POST /v2/email/outbound-emails (SendEmail).
func (s sesAPI) sesSend(w http.ResponseWriter, r *http.Request) {
	if typ, msg := s.sesAuthError(r); typ != "" {
		s.sesError(w, sesStatus[typ], typ, msg)
		return
	}
	body, err := readBody(r)
	if err != nil {
		s.sesError(w, http.StatusRequestEntityTooLarge, "BadRequestException", "Request too large")
		return
	}
	var req sesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		s.sesError(w, http.StatusBadRequest, "BadRequestException", "Invalid JSON: "+err.Error())
		return
	}
	if f, aborted := s.takeFault(r, opSend, kindMailY); aborted {
		return
	} else if f != nil {
		s.sesFault(w, f)
		return
	}
	ms, msg := sesMessagesOf(&req)
	if msg != "" {
		s.sesError(w, http.StatusBadRequest, "BadRequestException", msg)
		return
	}
	now := s.now()
	id := fmt.Sprintf("0100%012x-%s-000000", now.UnixMilli(), s.uuid())
	for i := range ms {
		ms[i].ID = id
	}
	s.record(kindMailY, ms)
	w.Header().Set("x-amzn-RequestId", s.uuid())
	writeJSON(w, http.StatusOK, map[string]string{"MessageId": id})
}

// sesMessagesOf validates the request and builds one Message per recipient.
func sesMessagesOf(req *sesRequest) ([]Message, string) {
	c := req.Content
	if c == nil || countNonNil(c.Simple != nil, c.Raw != nil, c.Template != nil) != 1 {
		return nil, "Content must have exactly one of Simple, Raw or Template."
	}
	m := Message{Headers: map[string]string{}}
	recipients, msg := sesEnvelope(req, m.Headers)
	if msg != "" {
		return nil, msg
	}
	switch {
	case c.Simple != nil:
		msg = sesSimpleContent(c.Simple, &m)
	case c.Raw != nil:
		msg = sesRawContent(c.Raw, &m, &recipients)
	default:
		t := c.Template
		if t.TemplateName == "" && t.TemplateArn == "" {
			return nil, "Content.Template needs TemplateName or TemplateArn."
		}
		m.Headers["X-SES-TEMPLATE"] = t.TemplateName + t.TemplateArn
		m.Text = t.TemplateData
	}
	if msg != "" {
		return nil, msg
	}
	if len(recipients) == 0 {
		return nil, "Destination needs at least one address."
	}
	if len(recipients) > 50 {
		return nil, "Recipient count exceeds 50."
	}
	ms := make([]Message, len(recipients))
	for i, a := range recipients {
		ms[i] = m
		ms[i].To = a
	}
	return ms, ""
}

// sesEnvelope checks the addresses of a request, sets the headers they
// make on h and returns the recipients (To, Cc and Bcc).
func sesEnvelope(req *sesRequest, h map[string]string) ([]string, string) {
	if req.FromEmailAddress != "" {
		from, msg := sesAddress("FromEmailAddress", req.FromEmailAddress)
		if msg != "" {
			return nil, msg
		}
		h["From"] = displayAddress(from)
	} else if req.Content.Raw == nil {
		return nil, "FromEmailAddress is required."
	}
	var recipients []string
	if d := req.Destination; d != nil {
		for _, list := range [][]string{d.ToAddresses, d.CcAddresses, d.BccAddresses} {
			for _, a := range list {
				addr, msg := sesAddress("Destination", a)
				if msg != "" {
					return nil, msg
				}
				recipients = append(recipients, addr.Address)
			}
		}
		if len(d.CcAddresses) > 0 {
			h["Cc"] = strings.Join(d.CcAddresses, ", ")
		}
	}
	for _, a := range req.ReplyToAddresses {
		if _, msg := sesAddress("ReplyToAddresses", a); msg != "" {
			return nil, msg
		}
	}
	if len(req.ReplyToAddresses) > 0 {
		h["Reply-To"] = strings.Join(req.ReplyToAddresses, ", ")
	}
	if req.ConfigurationSetName != "" {
		h["X-SES-CONFIGURATION-SET"] = req.ConfigurationSetName
	}
	return recipients, ""
}

// sesSimpleContent fills m from Content.Simple.
func sesSimpleContent(sm *sesSimple, m *Message) string {
	if sm.Subject == nil || sm.Subject.Data == "" {
		return "Content.Simple.Subject.Data is required."
	}
	m.Subject = sm.Subject.Data
	if sm.Body == nil || (sm.Body.Text == nil || sm.Body.Text.Data == "") && (sm.Body.HTML == nil || sm.Body.HTML.Data == "") {
		return "Content.Simple.Body needs Text or Html."
	}
	if sm.Body.Text != nil {
		m.Text = sm.Body.Text.Data
	}
	if sm.Body.HTML != nil {
		m.HTML = sm.Body.HTML.Data
	}
	for _, hd := range sm.Headers {
		if hd.Name == "" {
			return "Content.Simple.Headers: Name is required."
		}
		m.Headers[hd.Name] = hd.Value
	}
	return ""
}

// sesRawContent fills m from a raw MIME message; its To header names the
// recipients when the Destination named none.
func sesRawContent(raw *sesRaw, m *Message, recipients *[]string) string {
	mm, err := mail.ReadMessage(bytes.NewReader(raw.Data))
	if err != nil {
		return "Content.Raw.Data is not a MIME message: " + err.Error()
	}
	for k, v := range mm.Header {
		m.Headers[k] = v[0]
	}
	dec := new(mime.WordDecoder)
	if m.Subject, err = dec.DecodeHeader(mm.Header.Get("Subject")); err != nil {
		m.Subject = mm.Header.Get("Subject")
	}
	b, _ := io.ReadAll(mm.Body)
	m.Text = string(b)
	if len(*recipients) == 0 {
		list, _ := mm.Header.AddressList("To")
		for _, a := range list {
			*recipients = append(*recipients, a.Address)
		}
	}
	return ""
}

func countNonNil(bs ...bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}
