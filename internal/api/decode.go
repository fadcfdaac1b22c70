package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"

	"github.com/notifyd/notifyd/internal/notify"
)

// decodeJSON decodes body into v strictly: unknown fields, wrong types,
// malformed JSON and trailing data are 400 SVC-40000 naming the field.
func decodeJSON(body []byte, v any) error {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return notify.Invalid("Request body is required")
	}
	// Every body of the API is a JSON object: a bare null would decode
	// into nothing and pass as an empty update.
	if string(trimmed) == "null" {
		return notify.Invalid("Request body must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return decodeError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return notify.Invalid("Request body must hold a single JSON value")
	}
	if hasNUL(trimmed) {
		// No field of the API takes one, and PostgreSQL cannot store one.
		return notify.Invalid("Request body must not contain NUL characters")
	}
	return nil
}

// hasNUL reports whether a JSON string of body (already known to be
// valid JSON) holds a \u0000 escape.
func hasNUL(body []byte) bool {
	if !bytes.Contains(body, []byte(`\u0000`)) {
		return false
	}
	in := false
	for i := 0; i < len(body); i++ {
		switch c := body[i]; {
		case !in:
			in = c == '"'
		case c == '"':
			in = false
		case c == '\\':
			if i+5 < len(body) && string(body[i+1:i+6]) == "u0000" {
				return true
			}
			i++ // skip the escaped character
		}
	}
	return false
}

// decodeNone checks the body of an action that takes no fields: empty, or
// an empty JSON object. Anything else (unknown fields, malformed JSON) is
// 400 like on every other route.
func decodeNone(body []byte) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	return decodeJSON(body, &struct{}{})
}

func decodeError(err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se), errors.Is(err, io.ErrUnexpectedEOF):
		return notify.Invalid("Request body is not valid JSON")
	case errors.As(err, &te):
		if te.Field == "" {
			return notify.Invalid("Request body must be a JSON %s", jsonType(te.Type.Kind().String()))
		}
		return notify.Invalid("%s must be %s", te.Field, article(jsonType(te.Type.Kind().String())))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return notify.Invalid("%s is not an allowed field", name)
	}
	var ie *notify.Error
	if errors.As(err, &ie) {
		return ie
	}
	return notify.Invalid("Request body is invalid: %s", strings.TrimPrefix(err.Error(), "json: "))
}

func jsonType(goKind string) string {
	switch goKind {
	case "string":
		return "string"
	case "bool":
		return "boolean"
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "integer"
	case "float32", "float64":
		return "number"
	case "slice", "array":
		return "array"
	case "map", "struct", "ptr":
		return "object"
	}
	return goKind
}

func article(t string) string {
	if t == "array" || t == "object" || t == "integer" {
		return "an " + t
	}
	return "a " + t
}

// Optional distinguishes an absent field from an explicit null in PATCH
// bodies: Set is true when the field was present.
type Optional[T any] struct {
	Set   bool
	Null  bool
	Value T
}

// UnmarshalJSON records presence and null.
func (o *Optional[T]) UnmarshalJSON(b []byte) error {
	o.Set = true
	if string(b) == "null" {
		o.Null = true
		return nil
	}
	return json.Unmarshal(b, &o.Value)
}

// checkLen returns a 400 when s is longer than max characters.
func checkLen(field, s string, max int) error {
	if n := len([]rune(s)); n > max {
		return notify.Invalid("%s must be at most %d characters", field, max)
	}
	return nil
}
