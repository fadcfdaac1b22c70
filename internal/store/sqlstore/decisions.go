package sqlstore

import (
	"encoding/json"
	"errors"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/notifyd/notifyd/internal/notify"
)

// The decisions of a request (issue 32) are stored compactly: every send
// by recipient id or category carries three or four of them, and the
// column is written at acceptance, returned by the claim and written
// again by the settlement. One JSON array per decision:
//
//	[stage, at, kind, channel, outcome, rule, detail, until]
//
// stage is "a" (acceptance) or "d" (dispatch) or the stage itself, at and
// until are Unix nanoseconds (until 0 when none), and detail is null when
// it is the one the request's own fields give (derivedDetail): a
// preference's "chata_bot is on for category updates (rule ...)", a
// profile address's "recipient profile user-1". Reading gives back
// exactly the decisions written. Rows written before this form (a JSON
// array of objects) still read.

var stageCodes = map[string]string{notify.StageAcceptance: "a", notify.StageDispatch: "d"}

func stageOf(code string) string {
	switch code {
	case "a":
		return notify.StageAcceptance
	case "d":
		return notify.StageDispatch
	}
	return code
}

// derivedDetail is the detail a decision of kind, channel, outcome and
// rule has on a request of category and recipient id when its maker
// followed the usual wording; "" when there is none to derive.
func derivedDetail(d *notify.Decision, category, recipientID string) string {
	switch d.Kind {
	case notify.DecisionPreference:
		var cat *notify.Category
		if category != "" {
			cat = &notify.Category{Key: category}
		}
		return notify.PreferenceDecision{Allowed: d.Outcome == notify.OutcomeAllowed, Rule: notify.PreferenceRule(d.Rule)}.Explain(cat, d.Channel)
	case notify.DecisionAddress:
		if recipientID != "" {
			return "recipient profile " + recipientID
		}
	}
	return ""
}

// encodeDecisions answers the stored form of ds, nil for none.
func encodeDecisions(ds []notify.Decision, category, recipientID string) *string {
	if len(ds) == 0 {
		return nil
	}
	b := make([]byte, 0, 96*len(ds))
	b = append(b, '[')
	for i := range ds {
		d := &ds[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		st := stageCodes[d.Stage]
		if st == "" {
			st = d.Stage
		}
		b = appendJSONString(b, st)
		b = append(b, ',')
		b = strconv.AppendInt(b, unixNano(d.At), 10)
		for _, s := range []string{d.Kind, string(d.Channel), d.Outcome, d.Rule} {
			b = append(b, ',')
			b = appendJSONString(b, s)
		}
		b = append(b, ',')
		if d.Detail != "" && d.Detail == derivedDetail(d, category, recipientID) {
			b = append(b, "null"...)
		} else {
			b = appendJSONString(b, d.Detail)
		}
		b = append(b, ',')
		if d.Until != nil {
			b = strconv.AppendInt(b, unixNano(*d.Until), 10)
		} else {
			b = append(b, '0')
		}
		b = append(b, ']')
	}
	b = append(b, ']')
	s := string(b)
	return &s
}

// unixNano is t in Unix nanoseconds; the zero time is 0 (time.Time's own
// UnixNano of it is undefined).
func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromUnixNano(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// decodeDecisions reads the stored form back (either form).
func decodeDecisions(s string, category, recipientID string) ([]notify.Decision, error) {
	if len(s) >= 2 && s[0] == '[' && s[1] == '{' || s == "[]" || s == "null" {
		var ds []notify.Decision
		return ds, fromJSON(s, &ds)
	}
	p := decisionParser{s: s}
	var out []notify.Decision
	if !p.byte('[') {
		return nil, p.fail()
	}
	for !p.byte(']') {
		if len(out) > 0 && !p.byte(',') {
			return nil, p.fail()
		}
		var d notify.Decision
		var st, ch string
		var detail *string
		var at, until int64
		ok := p.byte('[') && p.str(&st) && p.byte(',') && p.int(&at) && p.byte(',') && p.str(&d.Kind) && p.byte(',') &&
			p.str(&ch) && p.byte(',') && p.str(&d.Outcome) && p.byte(',') && p.str(&d.Rule) && p.byte(',') &&
			p.nullableStr(&detail) && p.byte(',') && p.int(&until) && p.byte(']')
		if !ok {
			return nil, p.fail()
		}
		d.Stage, d.At, d.Channel = stageOf(st), fromUnixNano(at), notify.Channel(ch)
		if until != 0 {
			u := fromUnixNano(until)
			d.Until = &u
		}
		if detail != nil {
			d.Detail = *detail
		} else {
			d.Detail = derivedDetail(&d, category, recipientID)
		}
		out = append(out, d)
	}
	return out, nil
}

type decisionParser struct {
	s   string
	i   int
	err error
}

var errDecisions = errors.New("sqlstore: malformed decisions")

func (p *decisionParser) fail() error {
	if p.err != nil {
		return p.err
	}
	return errDecisions
}

func (p *decisionParser) byte(c byte) bool {
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *decisionParser) int(v *int64) bool {
	j := p.i
	if j < len(p.s) && p.s[j] == '-' {
		j++
	}
	for j < len(p.s) && p.s[j] >= '0' && p.s[j] <= '9' {
		j++
	}
	n, err := strconv.ParseInt(p.s[p.i:j], 10, 64)
	if err != nil {
		return false
	}
	*v, p.i = n, j
	return true
}

func (p *decisionParser) nullableStr(v **string) bool {
	if len(p.s)-p.i >= 4 && p.s[p.i:p.i+4] == "null" {
		p.i += 4
		return true
	}
	var s string
	if !p.str(&s) {
		return false
	}
	*v = &s
	return true
}

// str reads a JSON string: the plain ones (all that appendJSONString
// writes without an escape) directly, the others through encoding/json.
func (p *decisionParser) str(v *string) bool {
	if !p.byte('"') {
		return false
	}
	start, escaped := p.i, false
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case '\\':
			escaped = true
			p.i += 2
			continue
		case '"':
			if !escaped {
				*v = p.s[start:p.i]
				p.i++
				return true
			}
			if err := json.Unmarshal([]byte(p.s[start-1:p.i+1]), v); err != nil {
				p.err = err
				return false
			}
			p.i++
			return true
		}
		p.i++
	}
	return false
}

// appendJSONString appends s as a JSON string: quotes, backslashes and
// control characters escaped, invalid UTF-8 replaced by U+FFFD (as
// encoding/json does).
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, "\ufffd"...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}
