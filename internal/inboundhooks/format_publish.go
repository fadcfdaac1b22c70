package inboundhooks

import (
	"bytes"
	"encoding/json"
	"mime"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ntfy's publish API: the body is the message, and the Title, Priority,
// Tags and Click headers (or their short forms and query parameters, as
// ntfy reads them) say the rest. A JSON body holding a "topic" is ntfy's
// JSON publishing (what Uptime Kuma and others post to ntfy's root), its
// topic ignored: the hook's token is the topic.

// ntfyParam reads a publish parameter as ntfy does: a header (X-Name,
// Name or an alias), then the query; RFC 2047 encoded-words in headers
// are decoded, as ntfy does for non-ASCII titles.
func ntfyParam(p Payload, names ...string) string {
	for _, n := range names {
		for _, h := range []string{"X-" + n, n} {
			if v := p.header(h); v != "" {
				if d, err := new(mime.WordDecoder).DecodeHeader(v); err == nil {
					return d
				}
				return v
			}
		}
	}
	for _, n := range names {
		if v := p.Query.Get(strings.ToLower(n)); v != "" {
			return v
		}
	}
	return ""
}

// ntfyPriorities are ntfy's priority names and numbers.
var ntfyPriorities = map[string]int{"1": 1, "min": 1, "2": 2, "low": 2, "3": 3, "default": 3, "4": 4, "high": 4,
	"5": 5, "max": 5, "urgent": 5}

// ntfyJSON is ntfy's JSON publishing body.
type ntfyJSON struct {
	Topic    *string  `json:"topic"`
	Message  string   `json:"message"`
	Title    string   `json:"title"`
	Tags     []string `json:"tags"`
	Priority int      `json:"priority"`
	Click    string   `json:"click"`
}

func parseNtfy(p Payload) (*Message, error) {
	const f = "ntfy"
	var msg, title, prio, click string
	var tags []string
	var j ntfyJSON
	if b := bytes.TrimSpace(p.Body); len(b) > 0 && b[0] == '{' && json.Unmarshal(b, &j) == nil && j.Topic != nil {
		msg, title, tags, click = j.Message, j.Title, j.Tags, j.Click
		if j.Priority != 0 {
			prio = strconv.Itoa(j.Priority)
		}
	} else {
		if !utf8.Valid(p.Body) {
			return nil, invalid(f, "the body must be UTF-8 text (attachments are not taken)")
		}
		msg = string(p.Body)
		title, prio, click = ntfyParam(p, "Title", "ti", "t"), ntfyParam(p, "Priority", "prio", "p"), ntfyParam(p, "Click", "u")
		if t := ntfyParam(p, "Tags", "tag", "ta"); t != "" {
			tags = strings.Split(t, ",")
		}
	}
	if strings.TrimSpace(msg) == "" {
		msg = ntfyParam(p, "Message", "m")
	}
	msg = strings.TrimSpace(msg)
	if msg == "" {
		msg = "triggered" // ntfy's message for an empty publish
	}
	level := 3
	if prio != "" {
		var ok bool
		if level, ok = ntfyPriorities[strings.ToLower(strings.TrimSpace(prio))]; !ok {
			return nil, invalid(f, "priority must be 1 to 5 or min, low, default, high, max, urgent")
		}
	}
	var kept []string
	for _, tg := range tags {
		if tg = strings.TrimSpace(tg); tg != "" {
			kept = append(kept, tg)
		}
	}
	tags = kept
	m := &Message{Title: title, Text: msg,
		Vars: map[string]string{"message": msg, "priority": strconv.Itoa(level), "tags": strings.Join(tags, ","), "click": click},
		Meta: map[string]string{"priority": strconv.Itoa(level)}}
	if len(tags) > 0 {
		m.Meta["tags"] = strings.Join(tags, ",")
	}
	return m, nil
}

// The Apprise API's notify call: JSON or a form with body (required),
// title, type (info, success, warning, failure) and format (text,
// markdown, html); the text is sent as given whatever its format.

type appriseJSON struct {
	Body   *string         `json:"body"`
	Title  string          `json:"title"`
	Type   string          `json:"type"`
	Format string          `json:"format"`
	Tag    json.RawMessage `json:"tag"`
}

var appriseTypes = []string{"info", "success", "warning", "failure"}
var appriseFormats = []string{"text", "markdown", "html"}

func parseApprise(p Payload) (*Message, error) {
	const f = "Apprise"
	var in appriseJSON
	vs, err := form(p, f)
	if err != nil {
		return nil, err
	}
	if vs != nil {
		if b := vs.Get("body"); vs.Has("body") {
			in.Body = &b
		}
		in.Title, in.Type, in.Format = vs.Get("title"), vs.Get("type"), vs.Get("format")
		if t := vs.Get("tag"); t != "" {
			in.Tag, _ = json.Marshal(t)
		}
	} else if err := decodeJSON(f, p.Body, &in); err != nil {
		return nil, err
	}
	if in.Body == nil || strings.TrimSpace(*in.Body) == "" {
		return nil, invalid(f, "body is required")
	}
	typ, format := strings.ToLower(in.Type), strings.ToLower(in.Format)
	if typ == "" {
		typ = "info"
	}
	if format == "" {
		format = "text"
	}
	if !slices.Contains(appriseTypes, typ) {
		return nil, invalid(f, "type must be one of info, success, warning, failure")
	}
	if !slices.Contains(appriseFormats, format) {
		return nil, invalid(f, "format must be one of text, markdown, html")
	}
	var tag string
	if len(in.Tag) > 0 {
		var s string
		var list []string
		if json.Unmarshal(in.Tag, &s) == nil {
			tag = s
		} else if json.Unmarshal(in.Tag, &list) == nil {
			tag = strings.Join(list, ",")
		}
	}
	body := strings.TrimSpace(*in.Body)
	return &Message{Title: in.Title, Text: body,
		Vars: map[string]string{"body": body, "type": typ, "format": format, "tag": tag}}, nil
}
