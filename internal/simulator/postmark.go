package simulator

import (
	"encoding/json"
	"net/http"
	"net/mail"
	"strconv"
	"strings"
)

// Postmark ErrorCodes (postmarkapp.com API docs).
const (
	pmBadToken     = 10
	pmInvalidEmail = 300
	pmInvalidJSON  = 402
	pmNotAllowed   = 405
	pmInactive     = 406
	pmRateLimit    = 429
)

var postmarkMessages = map[int]string{
	pmBadToken:     "Request does not contain a valid Server token.",
	pmInvalidEmail: "Invalid email request",
	pmInvalidJSON:  "Received invalid JSON input.",
	pmNotAllowed:   "Not allowed to send. You have run out of credits.",
	pmInactive:     "You tried to send to recipient(s) that have been marked as inactive.",
	pmRateLimit:    "Rate limit exceeded.",
}

// postmarkPerMessage are the codes a batch reports per message (HTTP 200)
// rather than for the whole request.
var postmarkPerMessage = map[int]bool{pmInvalidEmail: true, pmInactive: true}

func postmarkError(w http.ResponseWriter, status, code int, msg string) {
	if msg == "" {
		msg = postmarkMessages[code]
	}
	if status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "1")
	}
	writeJSON(w, status, map[string]any{"ErrorCode": code, "Message": msg})
}

// postmarkFault answers a request-level fault. A bare 5xx is the vendor's
// error page; a code answers HTTP 401 (10), 429 (429) or 422 (the others).
func postmarkFault(w http.ResponseWriter, f *fault) {
	code, status := 0, f.Status
	if f.VendorCode != "" {
		code, _ = strconv.Atoi(f.VendorCode)
	} else {
		switch {
		case status >= 500:
			writeGatewayError(w, status)
			return
		case status == 401 || status == 403:
			code = pmBadToken
		case status == 429:
			code = pmRateLimit
		default:
			code = pmInvalidEmail
		}
	}
	if status == 0 {
		switch code {
		case pmBadToken:
			status = http.StatusUnauthorized
		case pmRateLimit:
			status = http.StatusTooManyRequests
		default:
			status = http.StatusUnprocessableEntity
		}
	}
	postmarkError(w, status, code, f.Message)
}

type postmarkHeader struct {
	Name  string `json:"Name"`
	Value string `json:"Value"`
}

type postmarkEmail struct {
	From          string            `json:"From"`
	To            string            `json:"To"`
	Cc            string            `json:"Cc"`
	Bcc           string            `json:"Bcc"`
	Subject       string            `json:"Subject"`
	Tag           string            `json:"Tag"`
	HTMLBody      string            `json:"HtmlBody"`
	TextBody      string            `json:"TextBody"`
	ReplyTo       string            `json:"ReplyTo"`
	Headers       []postmarkHeader  `json:"Headers"`
	Metadata      map[string]string `json:"Metadata"`
	MessageStream string            `json:"MessageStream"`
	TrackOpens    *bool             `json:"TrackOpens"`
	TrackLinks    string            `json:"TrackLinks"`
}

// check validates one email and returns its bare recipient addresses (To
// only; Cc and Bcc are recorded as headers).
func (e *postmarkEmail) check() ([]string, string) {
	if strings.TrimSpace(e.From) == "" {
		return nil, "Invalid 'From' address: ''."
	}
	if _, err := mail.ParseAddress(e.From); err != nil {
		return nil, "Invalid 'From' address: '" + e.From + "'."
	}
	if strings.TrimSpace(e.To) == "" {
		return nil, "Zero recipients specified"
	}
	total := 0
	var to []string
	for _, f := range []struct{ name, v string }{{"To", e.To}, {"Cc", e.Cc}, {"Bcc", e.Bcc}, {"ReplyTo", e.ReplyTo}} {
		if strings.TrimSpace(f.v) == "" {
			continue
		}
		list, err := mail.ParseAddressList(f.v)
		if err != nil {
			return nil, "Error parsing '" + f.name + "': Illegal email address '" + f.v + "'. It must contain the '@' symbol."
		}
		if f.name != "ReplyTo" {
			total += len(list)
		}
		if f.name == "To" {
			for _, a := range list {
				to = append(to, a.Address)
			}
		}
	}
	if total > 50 {
		return nil, "Maximum of 50 recipients (To, Cc and Bcc) per message."
	}
	if e.TextBody == "" && e.HTMLBody == "" {
		return nil, "Provide either email TextBody or HtmlBody or both."
	}
	for _, h := range e.Headers {
		if h.Name == "" {
			return nil, "Header names must not be empty."
		}
	}
	return to, ""
}

// messages builds the recorded messages. The Headers array becomes the
// map, with From, Cc, Reply-To and Postmark's own X-PM-* headers added.
func (e *postmarkEmail) messages(id string, to []string) []Message {
	h := make(map[string]string, len(e.Headers)+len(e.Metadata)+4)
	for _, hd := range e.Headers {
		h[hd.Name] = hd.Value
	}
	for k, v := range map[string]string{"From": e.From, "Cc": e.Cc, "Reply-To": e.ReplyTo,
		"X-PM-Message-Stream": e.MessageStream, "X-PM-Tag": e.Tag} {
		if _, ok := h[k]; !ok && v != "" {
			h[k] = v
		}
	}
	for k, v := range e.Metadata {
		h["X-PM-Metadata-"+k] = v
	}
	out := make([]Message, len(to))
	for i, a := range to {
		out[i] = Message{ID: id, To: a, Subject: e.Subject, Text: e.TextBody, HTML: e.HTMLBody, Headers: h}
	}
	return out
}

type postmarkResult struct {
	To          string `json:"To,omitempty"`
	SubmittedAt string `json:"SubmittedAt,omitempty"`
	MessageID   string `json:"MessageID,omitempty"`
	ErrorCode   int    `json:"ErrorCode"`
	Message     string `json:"Message"`
}

func (s postmarkAPI) postmarkAccept(e *postmarkEmail, to []string) (postmarkResult, []Message) {
	id := s.uuid()
	return postmarkResult{To: e.To, SubmittedAt: s.now().Format("2006-01-02T15:04:05.0000000Z07:00"),
		MessageID: id, ErrorCode: 0, Message: "OK"}, e.messages(id, to)
}

// postmarkPrelude checks the token, reads the body into v and takes a
// fault; ok is false when the answer was written.
func (s postmarkAPI) postmarkPrelude(w http.ResponseWriter, r *http.Request, v any) (*fault, bool) {
	if r.Header.Get("X-Postmark-Server-Token") == "" {
		postmarkError(w, http.StatusUnauthorized, pmBadToken,
			"No Account or Server API tokens were supplied in the HTTP headers. Please add a header for either X-Postmark-Server-Token or X-Postmark-Account-Token.")
		return nil, false
	}
	body, err := readBody(r)
	if err != nil {
		postmarkError(w, http.StatusRequestEntityTooLarge, pmInvalidEmail, "Request too large.")
		return nil, false
	}
	if err := json.Unmarshal(body, v); err != nil {
		postmarkError(w, http.StatusUnprocessableEntity, pmInvalidJSON, "Received invalid JSON input: "+err.Error())
		return nil, false
	}
	f, aborted := s.takeFault(r, opSend, kindMailZ)
	return f, !aborted
}

// postmarkSend serves POST /email.
func (s postmarkAPI) postmarkSend(w http.ResponseWriter, r *http.Request) {
	var e postmarkEmail
	f, ok := s.postmarkPrelude(w, r, &e)
	if !ok {
		return
	}
	if f != nil {
		postmarkFault(w, f)
		return
	}
	to, msg := e.check()
	if msg != "" {
		postmarkError(w, http.StatusUnprocessableEntity, pmInvalidEmail, msg)
		return
	}
	res, ms := s.postmarkAccept(&e, to)
	s.record(kindMailZ, ms)
	writeJSON(w, http.StatusOK, res)
}

// postmarkBatch serves POST /email/batch: an array of up to 500 emails,
// answered HTTP 200 with one result per email in input order. A fault
// with code 300 or 406 (and no status) fails every email of the call in
// its slot; other faults fail the whole request.
func (s postmarkAPI) postmarkBatch(w http.ResponseWriter, r *http.Request) {
	var emails []postmarkEmail
	f, ok := s.postmarkPrelude(w, r, &emails)
	if !ok {
		return
	}
	perMessage := 0
	if f != nil {
		code, _ := strconv.Atoi(f.VendorCode)
		if f.Status != 0 || !postmarkPerMessage[code] {
			postmarkFault(w, f)
			return
		}
		perMessage = code
	}
	if len(emails) == 0 || len(emails) > 500 {
		postmarkError(w, http.StatusUnprocessableEntity, pmInvalidEmail, "A batch must contain between 1 and 500 messages.")
		return
	}
	out := make([]postmarkResult, len(emails))
	var ms []Message
	for i := range emails {
		to, msg := emails[i].check()
		switch {
		case msg != "":
			out[i] = postmarkResult{ErrorCode: pmInvalidEmail, Message: msg}
		case perMessage != 0:
			fm := f.Message
			if fm == "" {
				fm = postmarkMessages[perMessage]
			}
			out[i] = postmarkResult{ErrorCode: perMessage, Message: fm}
		default:
			var rec []Message
			out[i], rec = s.postmarkAccept(&emails[i], to)
			ms = append(ms, rec...)
		}
	}
	s.record(kindMailZ, ms)
	writeJSON(w, http.StatusOK, out)
}
