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
	if len(bytes.TrimSpace(body)) == 0 {
		return notify.Invalid("Request body is required")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return decodeError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return notify.Invalid("Request body must hold a single JSON value")
	}
	return nil
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
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64", "float32", "float64":
		return "number"
	case "slice", "array":
		return "array"
	case "map", "struct", "ptr":
		return "object"
	}
	return goKind
}

func article(t string) string {
	if t == "array" || t == "object" {
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
