// Command openapifields prints, as JSON, the field names of every schema
// of notifyd's OpenAPI document (openapi/openapi.yaml, the one the binary
// serves at GET /openapi.yaml), so the SDK tests can check their
// hand-written models against it without a YAML parser:
//
//	{"schemas": {"SendRequest": {"properties": [...], "required": [...]}, ...}}
//
// $ref, allOf, oneOf and anyOf are resolved: allOf unites properties and
// required fields; oneOf and anyOf unite properties and require only what
// every object branch requires.
package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/notifyd/notifyd/openapi"
)

type fields struct {
	Properties []string `json:"properties"`
	Required   []string `json:"required"`
}

func main() {
	out, err := run(openapi.OpenAPI)
	if err != nil {
		fmt.Fprintln(os.Stderr, "openapifields:", err)
		os.Exit(1)
	}
	os.Stdout.Write(out)
}

func run(doc []byte) ([]byte, error) {
	var root map[string]any
	if err := yaml.Unmarshal(doc, &root); err != nil {
		return nil, err
	}
	components, _ := root["components"].(map[string]any)
	schemas, _ := components["schemas"].(map[string]any)
	if len(schemas) == 0 {
		return nil, fmt.Errorf("no components.schemas")
	}
	r := resolver{schemas: schemas}
	all := map[string]fields{}
	for name := range schemas {
		props, req, err := r.resolve(schemas[name], 0)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		all[name] = fields{Properties: keys(props), Required: keys(req)}
	}
	b, err := json.MarshalIndent(map[string]any{"schemas": all}, "", "  ")
	return append(b, '\n'), err
}

type resolver struct{ schemas map[string]any }

// resolve answers the property names of schema s and the names it
// requires (none for a schema that is no object: a string, an array,
// null).
func (r resolver) resolve(s any, depth int) (props map[string]bool, required map[string]bool, err error) {
	if depth > 32 {
		return nil, nil, fmt.Errorf("$ref cycle")
	}
	m, _ := s.(map[string]any)
	props, required = map[string]bool{}, map[string]bool{}
	if ref, ok := m["$ref"].(string); ok {
		name, found := strings.CutPrefix(ref, "#/components/schemas/")
		if !found || r.schemas[name] == nil {
			return nil, nil, fmt.Errorf("unknown $ref %q", ref)
		}
		return r.resolve(r.schemas[name], depth+1)
	}
	if p, ok := m["properties"].(map[string]any); ok {
		for k := range p {
			props[k] = true
		}
	}
	if req, ok := m["required"].([]any); ok {
		for _, k := range req {
			required[fmt.Sprint(k)] = true
		}
	}
	if parts, ok := m["allOf"].([]any); ok {
		for _, part := range parts {
			p, q, err := r.resolve(part, depth+1)
			if err != nil {
				return nil, nil, err
			}
			merge(props, p)
			merge(required, q)
		}
	}
	for _, key := range []string{"oneOf", "anyOf"} {
		parts, ok := m[key].([]any)
		if !ok {
			continue
		}
		var common map[string]bool
		for _, part := range parts {
			p, q, err := r.resolve(part, depth+1)
			if err != nil {
				return nil, nil, err
			}
			if len(p) == 0 {
				continue // null, a string: no fields
			}
			merge(props, p)
			if common == nil {
				common = q
				continue
			}
			for k := range common {
				if !q[k] {
					delete(common, k)
				}
			}
		}
		merge(required, common)
	}
	return props, required, nil
}

// keys are m's keys, sorted; [] (not null) when there are none.
func keys(m map[string]bool) []string {
	return append([]string{}, slices.Sorted(maps.Keys(m))...)
}

func merge(dst, src map[string]bool) {
	for k := range src {
		dst[k] = true
	}
}
