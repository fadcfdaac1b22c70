package inboundhooks

import (
	"strings"
)

// Slack's incoming-webhook JSON (also as a form's payload field): text,
// blocks and the legacy attachments. The blocks' text is what a reader
// of the Slack message sees, so it is the message when there is any;
// text (Slack's notification fallback) is used otherwise. The first
// header block, else the first attachment's title, is the title.

type slackField struct {
	Title string `json:"title"`
	Value string `json:"value"`
}

type slackAttachment struct {
	Fallback string           `json:"fallback"`
	Pretext  string           `json:"pretext"`
	Title    string           `json:"title"`
	Text     string           `json:"text"`
	Fields   []slackField     `json:"fields"`
	Blocks   []map[string]any `json:"blocks"`
}

type slackPayload struct {
	Text        string            `json:"text"`
	Blocks      []map[string]any  `json:"blocks"`
	Attachments []slackAttachment `json:"attachments"`
	Username    string            `json:"username"`
	Channel     string            `json:"channel"`
}

func parseSlack(p Payload) (*Message, error) {
	const f = "Slack"
	body := p.Body
	vs, err := form(p, f)
	if err != nil {
		return nil, err
	}
	if vs != nil {
		body = []byte(vs.Get("payload"))
	}
	var s slackPayload
	if err := decodeJSON(f, body, &s); err != nil {
		return nil, err
	}
	title, lines := blocksText(s.Blocks)
	if len(lines) == 0 && strings.TrimSpace(s.Text) != "" {
		lines = []string{plainLinks(strings.TrimSpace(s.Text))}
	}
	for _, a := range s.Attachments {
		at, al := blocksText(a.Blocks)
		if title == "" {
			title = firstNonEmpty(a.Title, at)
		}
		n := len(lines)
		for _, t := range []string{a.Pretext, a.Title, a.Text} {
			if t = strings.TrimSpace(t); t != "" {
				lines = append(lines, plainLinks(t))
			}
		}
		for _, fl := range a.Fields {
			if fl.Title != "" || fl.Value != "" {
				lines = append(lines, strings.TrimSpace(fl.Title+": "+plainLinks(fl.Value)))
			}
		}
		lines = append(lines, al...)
		if len(lines) == n && strings.TrimSpace(a.Fallback) != "" {
			lines = append(lines, plainLinks(strings.TrimSpace(a.Fallback)))
		}
	}
	text := strings.Join(lines, "\n")
	if text == "" {
		return nil, invalid(f, "no_text: text, blocks or attachments must hold some text")
	}
	return &Message{Title: title, Text: text,
		Vars: map[string]string{"slackText": s.Text, "username": s.Username, "channel": s.Channel}}, nil
}

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// blocksText reads Block Kit blocks: the first header's text as a title,
// and one line per header, section (and its fields), context and rich
// text block. Images, dividers and interactive blocks say nothing to
// read.
func blocksText(blocks []map[string]any) (title string, lines []string) {
	add := func(s string) {
		if s = strings.TrimSpace(s); s != "" {
			lines = append(lines, plainLinks(s))
		}
	}
	for _, b := range blocks {
		switch b["type"] {
		case "header":
			t := textOf(b["text"])
			if title == "" {
				title = t
			}
			add(t)
		case "section":
			add(textOf(b["text"]))
			if fs, ok := b["fields"].([]any); ok {
				for _, fl := range fs {
					add(textOf(fl))
				}
			}
		case "context":
			var parts []string
			if es, ok := b["elements"].([]any); ok {
				for _, e := range es {
					if t := textOf(e); t != "" {
						parts = append(parts, t)
					}
				}
			}
			add(strings.Join(parts, " "))
		case "rich_text":
			add(richText(b["elements"], ""))
		}
	}
	return title, lines
}

// textOf is the text of a text object ({"type":"mrkdwn","text":...}).
func textOf(v any) string {
	m, ok := v.(map[string]any)
	if !ok {
		return ""
	}
	switch m["type"] {
	case "mrkdwn", "plain_text":
		s, _ := m["text"].(string)
		return s
	}
	return ""
}

// richText flattens rich text elements: sections and quotes become lines,
// list items bullets, and the inline elements their text.
func richText(v any, bullet string) string {
	es, ok := v.([]any)
	if !ok {
		return ""
	}
	var b strings.Builder
	for _, e := range es {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		str := func(k string) string { s, _ := m[k].(string); return s }
		switch m["type"] {
		case "rich_text_section", "rich_text_preformatted", "rich_text_quote":
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			b.WriteString(bullet + richText(m["elements"], ""))
		case "rich_text_list":
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			b.WriteString(richText(m["elements"], "• "))
		case "text":
			b.WriteString(str("text"))
		case "link":
			if t := str("text"); t != "" && t != str("url") {
				b.WriteString(t + " (" + str("url") + ")")
			} else {
				b.WriteString(str("url"))
			}
		case "emoji":
			b.WriteString(":" + str("name") + ":")
		case "user":
			b.WriteString("@" + str("user_id"))
		case "channel":
			b.WriteString("#" + str("channel_id"))
		}
	}
	return b.String()
}
