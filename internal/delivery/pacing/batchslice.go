package pacing

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"

	"github.com/notifyd/notifyd/internal/provider"
)

// The messages of one batch call share its exchange. Kept whole in every
// message's attempt, a call of n messages would be stored n times (n² for
// the batch: 500 messages make tens of megabytes). sliceExchanges gives
// each message the part of the call that is its own: the request and the
// answer as if the call had carried only this message, with the shared
// fields kept. Only shapes recognized with certainty are cut, else the
// exchange stays whole:
//   - a JSON array of n items (mailx, mailz batch bodies and answers);
//   - a JSON object whose arrays of n items become the item of this
//     message (vendorB {"messages":[...]}; in answers only arrays
//     documented in input order, mailx {"data":[...]});
//   - a form of numbered fields name_1..name_n (vendorA rec_N, msg_N,
//     receiver_N...), of which this message's number is kept.
//
// A call is recognized by its shared answer: an adapter that splits a
// batch (by template, by vendor maximum) gives each call its own answer,
// and a message's index in its call is its rank among the batch's
// messages of that call.
func sliceExchanges(res []provider.Result) {
	type group struct{ members []int }
	groups := map[*provider.Response]*group{}
	for i, r := range res {
		if r.Exchange.Response == nil {
			continue
		}
		g := groups[r.Exchange.Response]
		if g == nil {
			g = &group{}
			groups[r.Exchange.Response] = g
		}
		g.members = append(g.members, i)
	}
	for resp, g := range groups {
		n := len(g.members)
		if n < 2 {
			continue
		}
		req := newSlicer(res[g.members[0]].Exchange.Request, n, nil)
		req.compact = true // from json.Marshal: compact and HTML-escaped already
		body := newSlicer(json.RawMessage(resp.Body), n, inputOrderAnswer)
		for k, i := range g.members {
			ex := res[i].Exchange
			if v, ok := req.part(k); ok {
				ex.Request = JSONPart(v)
			}
			if v, ok := body.part(k); ok {
				r := *resp
				r.Body = string(v)
				ex.Response = &r
			}
			res[i].Exchange = ex
		}
	}
}

// slicer cuts one logged value of a call of n messages.
type slicer struct {
	n int
	// compact: the value's JSON came from json.Marshal, so its pieces are
	// compact and HTML-escaped already and are joined as they are instead
	// of going through json.Marshal again (which compacts every byte once
	// more: for a mail campaign's batches of 100 that was a sixth of the
	// worker's CPU). The parts are then JSONPart.
	compact bool
	array   []json.RawMessage            // a top-level array of n items
	obj     map[string]json.RawMessage   // an object with arrays of n items
	items   map[string][]json.RawMessage // those arrays
	form    map[string]string            // a form of numbered fields
}

// inputOrderAnswer names the answer arrays documented in input order
// (mailx "data"); other answer lists (vendorB messageList) may come in
// any order and stay whole.
func inputOrderAnswer(key string) bool { return key == "data" }

// newSlicer prepares v for cutting; keep, when set, limits the object
// arrays that are cut to those it names.
func newSlicer(v any, n int, keep func(string) bool) *slicer {
	s := &slicer{n: n}
	if f, ok := v.(map[string]string); ok {
		for k := range f {
			if num, ok := fieldNumber(k); ok && num > 1 {
				s.form = f
				break
			}
		}
		return s
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return s
	}
	if len(raw) > 0 && raw[0] == '[' {
		// Output of json.Marshal: valid, so its items are found by a scan
		// of its nesting instead of a decode.
		if arr := splitArray(raw); len(arr) == n {
			s.array = arr
		}
		return s
	}
	var arr []json.RawMessage
	if json.Unmarshal(raw, &arr) == nil {
		if len(arr) == n {
			s.array = arr
		}
		return s
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return s
	}
	for k, v := range obj {
		var a []json.RawMessage
		if (keep == nil || keep(k)) && json.Unmarshal(v, &a) == nil && len(a) == n {
			if s.items == nil {
				s.items = map[string][]json.RawMessage{}
			}
			s.items[k] = a
		}
	}
	if s.items != nil {
		s.obj = obj
	}
	return s
}

// part returns the value for the k-th message of the call, false when the
// value is not cut.
func (s *slicer) part(k int) (json.RawMessage, bool) {
	switch {
	case s.array != nil:
		if s.compact {
			return join("[", s.array[k], "]"), true
		}
		out, _ := json.Marshal([]json.RawMessage{s.array[k]})
		return out, true
	case s.obj != nil:
		if s.compact {
			return s.compactObject(k), true
		}
		m := make(map[string]json.RawMessage, len(s.obj))
		for key, v := range s.obj {
			if a, ok := s.items[key]; ok {
				v, _ = json.Marshal([]json.RawMessage{a[k]})
			}
			m[key] = v
		}
		out, _ := json.Marshal(m)
		return out, true
	case s.form != nil:
		m := make(map[string]string, len(s.form))
		for key, v := range s.form {
			if num, ok := fieldNumber(key); ok && num <= s.n && num != k+1 {
				continue
			}
			m[key] = v
		}
		out, _ := json.Marshal(m)
		return out, true
	}
	return nil, false
}

// compactObject is part for an object of compact JSON: what json.Marshal
// of the cut map would give (keys sorted), built without re-encoding the
// values.
func (s *slicer) compactObject(k int) json.RawMessage {
	keys := make([]string, 0, len(s.obj))
	for key := range s.obj {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	out := []byte{'{'}
	for i, key := range keys {
		if i > 0 {
			out = append(out, ',')
		}
		name, _ := json.Marshal(key)
		out = append(append(out, name...), ':')
		if a, ok := s.items[key]; ok {
			out = append(append(append(out, '['), a[k]...), ']')
		} else {
			out = append(out, s.obj[key]...)
		}
	}
	return append(out, '}')
}

// splitArray returns the items of raw, a JSON array known to be valid
// (json.Marshal wrote it), as sub-slices, by following strings and
// nesting only.
func splitArray(raw []byte) []json.RawMessage {
	var out []json.RawMessage
	depth, start, inString := 0, -1, false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
			if depth == 1 && start < 0 {
				start = i
			}
		case '[', '{':
			if depth == 1 && start < 0 {
				start = i
			}
			depth++
		case ']', '}':
			depth--
			if depth == 0 && start >= 0 {
				out = append(out, raw[start:i])
			}
		case ',':
			if depth == 1 {
				out = append(out, raw[start:i])
				start = -1
			}
		default:
			if depth == 1 && start < 0 && c != ' ' {
				start = i
			}
		}
	}
	return out
}

func join(head string, v []byte, tail string) json.RawMessage {
	out := make([]byte, 0, len(head)+len(v)+len(tail))
	return append(append(append(out, head...), v...), tail...)
}

// JSONPart is a message's part of a batch call's logged request: JSON that
// is already compact and HTML-escaped, as json.Marshal writes it, so the
// attempt record can embed it as it is.
type JSONPart []byte

// MarshalJSON returns the part itself.
func (p JSONPart) MarshalJSON() ([]byte, error) { return p, nil }

// fieldNumber reads N of a form field named name_N.
func fieldNumber(key string) (int, bool) {
	i := strings.LastIndexByte(key, '_')
	if i < 0 || i == len(key)-1 {
		return 0, false
	}
	n, err := strconv.Atoi(key[i+1:])
	return n, err == nil && n > 0
}
