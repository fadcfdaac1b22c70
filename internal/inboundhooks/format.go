package inboundhooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/notifyd/notifyd/internal/notify"
)

// Payload is one request to a hook's URL as the formats read it.
type Payload struct {
	Body        []byte
	ContentType string
	// Header reads a request header (nil: none).
	Header func(name string) string
	// Query is the URL's query.
	Query url.Values
	// Topic is the path segment after the token (ntfy's topic), "" when none.
	Topic string
}

func (p Payload) header(name string) string {
	if p.Header == nil {
		return ""
	}
	return p.Header(name)
}

// Message is what a payload says, whatever its format: a title (a mail's
// subject), a text, and the variables a hook's template may use.
type Message struct {
	Title string
	Text  string
	Vars  map[string]string
	// Meta goes into the requests' metadata (ntfy's priority and tags).
	Meta map[string]string
}

// Parse reads a payload of format.
func Parse(format string, p Payload) (*Message, error) {
	var m *Message
	var err error
	switch format {
	case notify.HookAlertmanager:
		m, err = parseAlertmanager(p)
	case notify.HookGrafana:
		m, err = parseGrafana(p)
	case notify.HookNtfy:
		m, err = parseNtfy(p)
	case notify.HookSlack:
		m, err = parseSlack(p)
	case notify.HookApprise:
		m, err = parseApprise(p)
	default:
		return nil, fmt.Errorf("unknown hook format %q", format)
	}
	if err != nil {
		return nil, err
	}
	if m.Vars == nil {
		m.Vars = map[string]string{}
	}
	if p.Topic != "" {
		m.Vars["topic"] = p.Topic
	}
	m.Title = oneLine(m.Title)
	m.Vars["title"], m.Vars["text"] = m.Title, m.Text
	return m, nil
}

// invalid is a 400 about the payload of format.
func invalid(format, detail string, args ...any) error {
	return notify.Invalid("The body is not a valid %s payload: %s", format, fmt.Sprintf(detail, args...))
}

// decodeJSON decodes a JSON object body into v, leniently (the tools add
// fields over time), answering a 400 that says what is wrong.
func decodeJSON(format string, body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return invalid(format, "the body is empty")
	}
	if !utf8.Valid(body) {
		return invalid(format, "the body must be UTF-8 JSON")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		var se *json.SyntaxError
		switch {
		case errors.As(err, &te) && te.Field != "":
			return invalid(format, "%s must be a JSON %s", te.Field, jsonKind(te.Type.Kind().String()))
		case errors.As(err, &te):
			return invalid(format, "the body must be a JSON object")
		case errors.As(err, &se):
			return invalid(format, "malformed JSON at byte %d", se.Offset)
		default:
			return invalid(format, "malformed JSON")
		}
	}
	if _, err := dec.Token(); err != io.EOF {
		return invalid(format, "unexpected data after the JSON value")
	}
	return nil
}

// jsonKind names a Go kind as JSON does.
func jsonKind(k string) string {
	switch k {
	case "map", "struct":
		return "object"
	case "slice", "array":
		return "array"
	case "int", "int64", "float64", "int32", "uint", "uint64":
		return "number"
	case "bool":
		return "boolean"
	}
	return k
}

// form reads a url-encoded or multipart form body (the Apprise API's and
// Slack's form posts); nil when the body is neither.
func form(p Payload, format string) (url.Values, error) {
	mt, params, err := mime.ParseMediaType(p.ContentType)
	if err != nil {
		return nil, nil
	}
	switch mt {
	case "application/x-www-form-urlencoded":
		vs, err := url.ParseQuery(string(p.Body))
		if err != nil {
			return nil, invalid(format, "malformed form body")
		}
		return vs, nil
	case "multipart/form-data":
		r := multipart.NewReader(bytes.NewReader(p.Body), params["boundary"])
		f, err := r.ReadForm(1 << 20)
		if err != nil {
			return nil, invalid(format, "malformed multipart body")
		}
		defer func() { _ = f.RemoveAll() }()
		return f.Value, nil
	}
	return nil, nil
}

// oneLine is s as a one-line value (a mail subject): control characters
// and runs of space become one space.
func oneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}

// varName turns a label or field name into a template variable name
// (letters, digits and underscores).
func varName(s string) string {
	return strings.Map(func(r rune) rune {
		if r < utf8.RuneSelf && (r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)) {
			return r
		}
		return '_'
	}, s)
}

// maxMapVars bounds the variables one map of a payload adds (labels,
// annotations), so a payload stays within a send's 200 variables.
const maxMapVars = 40

// putMap adds m's entries as variables prefix_KEY, the first maxMapVars
// keys in order.
func putMap(vars map[string]string, prefix string, m map[string]string) {
	for i, k := range sortedKeys(m) {
		if i == maxMapVars {
			break
		}
		vars[prefix+varName(k)] = m[k]
	}
}

// sortedValues are m's values ordered by key, less those of keys in skip.
func sortedValues(m map[string]string, skip map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		if _, ok := skip[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = m[k]
	}
	return out
}

// slackLinkRE is Slack's mrkdwn link <url|label> or <url>.
var slackLinkRE = regexp.MustCompile(`<((?:https?|mailto):[^|>\s]+)(?:\|([^>]*))?>`)

// plainLinks writes Slack-style links (which Grafana and Alertmanager
// templates also use for Slack) as "label (url)" for plain-text channels.
func plainLinks(s string) string {
	return slackLinkRE.ReplaceAllStringFunc(s, func(m string) string {
		sub := slackLinkRE.FindStringSubmatch(m)
		if sub[2] == "" || sub[2] == sub[1] {
			return sub[1]
		}
		return sub[2] + " (" + sub[1] + ")"
	})
}
