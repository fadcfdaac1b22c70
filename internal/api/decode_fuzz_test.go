package api

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/notifyd/notifyd/internal/notify"
)

// fuzzBody has the shapes handlers decode: scalars, pointers, Optional
// fields, nested objects, arrays of objects, maps.
type fuzzBody struct {
	Name     string                      `json:"name"`
	Count    int                         `json:"count"`
	Ratio    float64                     `json:"ratio"`
	Flag     *bool                       `json:"flag"`
	Title    Optional[string]            `json:"title"`
	Config   Optional[map[string]any]    `json:"config"`
	Strings  Optional[[]string]          `json:"strings"`
	Tags     []string                    `json:"tags"`
	Labels   map[string]string           `json:"labels"`
	Meta     map[string]any              `json:"meta"`
	Nested   fuzzNested                  `json:"nested"`
	Ptr      *fuzzNested                 `json:"ptr"`
	Items    []fuzzNested                `json:"items"`
	Optional Optional[map[string]string] `json:"optional"`
	Raw      json.RawMessage             `json:"raw"`
}

type fuzzNested struct {
	ID       string  `json:"id"`
	Priority int     `json:"priority"`
	Enabled  *bool   `json:"enabled"`
	Deep     *[]int8 `json:"deep"`
	Inner    struct {
		Value uint16 `json:"value"`
	} `json:"inner"`
}

// FuzzDecodeJSON: decodeJSON never panics, and fails only with a 400
// SVC-40000 domain error; whatever it accepts is one valid JSON object
// without NUL characters.
func FuzzDecodeJSON(f *testing.F) {
	for _, s := range []string{
		``, ` `, `null`, `{}`, `[]`, `"x"`, `1`, `true`, `{"name":"a"}`, `{"name":1}`, `{"count":1.5}`, `{"count":1e400}`,
		`{"count":99999999999999999999}`, `{"unknown":1}`, `{"nested":{"unknown":1}}`, `{"items":[{"priority":"x"}]}`,
		`{"items":[{"inner":{"value":70000}}]}`, `{"ptr":null,"flag":null}`, `{"title":null,"config":{"a":"b","c":1}}`,
		`{"strings":[1]}`, `{"labels":{"a":null}}`, `{"meta":{"a":[{"b":{}}]}}`, `{"raw":{"x":[1,2,{"y":null}]}}`,
		`{"name":"a"} {"name":"b"}`, `{"name":"a"}]`, `{"name":"a`, `{"name":"\u0000"}`, `{"name":"\\u0000"}`,
		`{"name":"\ud800"}`, "{\"name\":\"\xff\"}", `{"nested":{"deep":[128]}}`, `{"Name":"case"}`, `{"NAME":"x","name":"y"}`,
		`{"optional":{"k":"v"},"optional":null}`, "\ufeff{}", `{"a":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var v fuzzBody
		err := decodeJSON(body, &v)
		if err != nil {
			ne, ok := err.(*notify.Error)
			if !ok {
				t.Fatalf("error %T %v is not a *notify.Error", err, err)
			}
			if ne.Code != notify.CodeValidation || ne.Status() != 400 || ne.Detail == "" {
				t.Fatalf("error %+v is not a 400 SVC-40000 with a detail", ne)
			}
			return
		}
		if !json.Valid(body) {
			t.Fatalf("accepted invalid JSON %q", body)
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(body, &obj) != nil || obj == nil {
			t.Fatalf("accepted a body that is not a JSON object: %q", body)
		}
		if strings.Contains(string(body), `\u0000`) && hasNUL(body) {
			t.Fatalf("accepted a NUL character: %q", body)
		}
		// The decoded value encodes again (nothing half-built).
		if _, err := json.Marshal(v); err != nil {
			t.Fatalf("decoded value does not encode: %v", err)
		}
		// decodeNone accepts exactly the bodies without fields.
		if err := decodeNone(body); (err == nil) != (len(obj) == 0) {
			t.Fatalf("decodeNone(%q) = %v", body, err)
		}
	})
}

func TestHasNUL(t *testing.T) {
	t.Parallel()
	for body, want := range map[string]bool{
		`{"a":"\u0000"}`:       true,
		`{"a":"x\u0000y"}`:     true,
		`{"\u0000":"x"}`:       true,
		`{"a":"\\u0000"}`:      false, // an escaped backslash, then text
		`{"a":"\\\u0000"}`:     true,
		`{"a":"\u00000"}`:      true,
		`{"a":"\u0001"}`:       false,
		`{"a":"u0000"}`:        false,
		`{"a":"\"\u0000"}`:     true,
		`{"a":"\\\\u0000"}`:    false,
		`{"a":["x","\u0000"]}`: true,
	} {
		if got := hasNUL([]byte(body)); got != want {
			t.Errorf("hasNUL(%s) = %v, want %v", body, got, want)
		}
	}
}

func TestDecodeJSONDetails(t *testing.T) {
	t.Parallel()
	for body, want := range map[string]string{
		``:                                "Request body is required",
		`null`:                            "Request body must be a JSON object",
		`[]`:                              "Request body must be a JSON object",
		`{"name":`:                        "Request body is not valid JSON",
		`{"name":"a"} {}`:                 "Request body must hold a single JSON value",
		`{"zz":1}`:                        "zz is not an allowed field",
		`{"nested":{"zz":1}}`:             "zz is not an allowed field",
		`{"name":1}`:                      "name must be a string",
		`{"count":1.5}`:                   "count must be an integer",
		`{"ratio":"x"}`:                   "ratio must be a number",
		`{"flag":"x"}`:                    "flag must be a boolean",
		`{"tags":{}}`:                     "tags must be an array",
		`{"nested":[]}`:                   "nested must be an object",
		`{"items":[{"priority":"x"}]}`:    "items.priority must be an integer",
		`{"name":"\u0000"}`:               "Request body must not contain NUL characters",
		`{"config":{"a":{"b":"\u0000"}}}`: "Request body must not contain NUL characters",
		// Names match in exact case, and no name may be given twice
		// (encoding/json took CHANNEL for channel and kept the last).
		`{"NAME":"x"}`:                       "NAME is not an allowed field",
		`{"name":"a","NAME":"b"}`:            "NAME is not an allowed field",
		`{"nested":{"ID":"a"}}`:              "ID is not an allowed field",
		`{"title":"a","Title":"b"}`:          "Title is not an allowed field",
		`{"name":"a","name":"b"}`:            "Request body is not valid JSON: name is given more than once",
		`{"items":[{"id":"a","id":"b"}]}`:    "Request body is not valid JSON: id is given more than once",
		`{"optional":{"k":"v","k":"w"}}`:     "Request body is not valid JSON: k is given more than once",
		`{"meta":{"a":{"b":1,"b":2}}}`:       "Request body is not valid JSON: b is given more than once",
		`{"optional":{"k":1}}`:               "optional must be a string",
		`{"title":1}`:                        "title must be a string",
		`{"labels":{"a":1}}`:                 "labels must be a string",
		`{"items":[{"inner":{"value":-1}}]}`: "items.inner.value must be an integer",
	} {
		var v fuzzBody
		err := decodeJSON([]byte(body), &v)
		ne, ok := err.(*notify.Error)
		if !ok || ne.Code != notify.CodeValidation || ne.Detail != want {
			t.Errorf("decodeJSON(%s) = %v, want %q", body, err, want)
		}
	}
}
