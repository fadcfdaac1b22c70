package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/notifyd/notifyd/internal/notify"
)

// decodeOptions: names match in exact case and a name given twice is
// refused (encoding/json matched "CHANNEL" to channel and kept the last of
// two, so a body could mean something else than it reads); invalid UTF-8 is
// still replaced rather than refused, as before.
var decodeOptions = jsonv2.JoinOptions(
	jsonv2.RejectUnknownMembers(true),
	jsontext.AllowDuplicateNames(false),
	jsontext.AllowInvalidUTF8(true),
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
	dec := jsontext.NewDecoder(bytes.NewReader(body), decodeOptions)
	if err := jsonv2.UnmarshalDecode(dec, v); err != nil {
		return decodeError(err, reflect.TypeOf(v))
	}
	if _, err := dec.ReadToken(); !errors.Is(err, io.EOF) {
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

func decodeError(err error, t reflect.Type) error {
	var ie *notify.Error
	if errors.As(err, &ie) {
		return ie
	}
	var syn *jsontext.SyntacticError
	var sem *jsonv2.SemanticError
	switch {
	case errors.As(err, &syn) && errors.Is(err, jsontext.ErrDuplicateName):
		return notify.Invalid("Request body is not valid JSON: %s is given more than once", syn.JSONPointer.LastToken())
	case errors.As(err, &syn), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return notify.Invalid("Request body is not valid JSON")
	case errors.As(err, &sem) && errors.Is(err, jsonv2.ErrUnknownName):
		return notify.Invalid("%s is not an allowed field", sem.JSONPointer.LastToken())
	case errors.As(err, &sem) && sem.GoType != nil:
		want := jsonType(sem.GoType.Kind().String())
		if field := fieldPath(t, sem.JSONPointer); field != "" {
			return notify.Invalid("%s must be %s", field, article(want))
		}
		return notify.Invalid("Request body must be a JSON %s", want)
	}
	return notify.Invalid("Request body is invalid")
}

// fieldPath names the field at ptr the way details always have: struct
// field names joined by dots, without array indices or map keys
// ("items.priority", "attributes").
func fieldPath(t reflect.Type, ptr jsontext.Pointer) string {
	var names []string
	for tok := range ptr.Tokens() {
		t = valueType(t)
		switch t.Kind() {
		case reflect.Struct:
			f, ok := structField(t, tok)
			if !ok {
				return strings.Join(names, ".")
			}
			names = append(names, tok)
			t = f.Type
		case reflect.Map, reflect.Slice, reflect.Array:
			t = t.Elem()
		default:
			return strings.Join(names, ".")
		}
	}
	return strings.Join(names, ".")
}

// optional is implemented by Optional: its JSON value is its Value's.
type optional interface{ valueType() reflect.Type }

func valueType(t reflect.Type) reflect.Type {
	for {
		switch {
		case t.Kind() == reflect.Pointer:
			t = t.Elem()
		case t.Implements(reflect.TypeFor[optional]()):
			t = reflect.Zero(t).Interface().(optional).valueType()
		default:
			return t
		}
	}
}

// structField finds the field of t named name in JSON, embedded structs
// included.
func structField(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case tag == "-":
		case f.Anonymous && tag == "" && valueType(f.Type).Kind() == reflect.Struct:
			if g, ok := structField(valueType(f.Type), name); ok {
				return g, true
			}
		case tag == name, tag == "" && f.Name == name:
			return f, true
		}
	}
	return reflect.StructField{}, false
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

// UnmarshalJSONFrom is UnmarshalJSON for decodeJSON: the value is decoded
// with the same options (exact names, no duplicates) and its errors keep
// their place in the body.
func (o *Optional[T]) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	o.Set = true
	if dec.PeekKind() == 'n' {
		o.Null = true
		_, err := dec.ReadToken()
		return err
	}
	return jsonv2.UnmarshalDecode(dec, &o.Value)
}

func (Optional[T]) valueType() reflect.Type { return reflect.TypeFor[T]() }

// checkLen returns a 400 when s is longer than max characters.
func checkLen(field, s string, max int) error {
	if n := len([]rune(s)); n > max {
		return notify.Invalid("%s must be at most %d characters", field, max)
	}
	return nil
}
