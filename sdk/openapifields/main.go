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
//
// Objects written inline, with no schema name of their own, are listed
// too, under a dotted name, so that the SDKs can check those models as
// well: an operation's request body is "<operationId>.request", its
// answer "<operationId>.<status>" (a components/responses $ref followed),
// an inline object property "<name>.<property>" and the inline object
// items of an array property "<name>.<property>[]" (for example
// "triggerWorkflow.202.data.runs[]", "WorkflowRun.steps[]").
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
	responses, _ := components["responses"].(map[string]any)
	r := resolver{schemas: schemas, responses: responses}
	all := map[string]fields{}
	for name := range schemas {
		props, req, err := r.resolve(schemas[name], 0)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		all[name] = fields{Properties: keys(props), Required: keys(req)}
		if err := r.inline(all, name, schemas[name], 0); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	if err := r.operations(all, root); err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(map[string]any{"schemas": all}, "", "  ")
	return append(b, '\n'), err
}

type resolver struct {
	schemas   map[string]any
	responses map[string]any
}

// operations adds each operation's inline request body and answers
// (application/json) to all.
func (r resolver) operations(all map[string]fields, root map[string]any) error {
	paths, _ := root["paths"].(map[string]any)
	for _, item := range paths {
		ops, _ := item.(map[string]any)
		for _, op := range ops {
			o, _ := op.(map[string]any)
			id, _ := o["operationId"].(string)
			if id == "" {
				continue // the path's parameters, or an operation without id
			}
			if rb, ok := o["requestBody"].(map[string]any); ok {
				if err := r.named(all, id+".request", jsonSchema(rb)); err != nil {
					return err
				}
			}
			answers, _ := o["responses"].(map[string]any)
			for status, a := range answers {
				resp, _ := a.(map[string]any)
				if ref, ok := resp["$ref"].(string); ok {
					name, _ := strings.CutPrefix(ref, "#/components/responses/")
					resp, _ = r.responses[name].(map[string]any)
				}
				if err := r.named(all, id+"."+status, jsonSchema(resp)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// jsonSchema is the application/json schema of a request body or an
// answer, nil without one.
func jsonSchema(bodyOrAnswer map[string]any) any {
	content, _ := bodyOrAnswer["content"].(map[string]any)
	media, _ := content["application/json"].(map[string]any)
	return media["schema"]
}

// named adds schema s (when it is one with fields) and its inline
// objects to all under name.
func (r resolver) named(all map[string]fields, name string, s any) error {
	if s == nil {
		return nil
	}
	props, req, err := r.resolve(s, 0)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if len(props) > 0 {
		all[name] = fields{Properties: keys(props), Required: keys(req)}
	}
	return r.inline(all, name, s, 0)
}

// inline adds the objects written inline in schema s (not $refs, which
// have their own name) to all, named after s's name.
func (r resolver) inline(all map[string]fields, name string, s any, depth int) error {
	if depth > 32 {
		return fmt.Errorf("inline objects nested too deep")
	}
	m, _ := s.(map[string]any)
	if _, ok := m["$ref"]; ok {
		return nil
	}
	for _, key := range []string{"allOf", "oneOf", "anyOf"} {
		parts, _ := m[key].([]any)
		for _, part := range parts {
			if err := r.inline(all, name, part, depth+1); err != nil {
				return err
			}
		}
	}
	p, _ := m["properties"].(map[string]any)
	for prop, ps := range p {
		sub, _ := ps.(map[string]any)
		child := name + "." + prop
		if items, ok := sub["items"].(map[string]any); ok {
			sub, child = items, child+"[]"
		}
		if _, ok := sub["$ref"]; ok || !hasFields(sub) {
			continue
		}
		props, req, err := r.resolve(sub, depth+1)
		if err != nil {
			return fmt.Errorf("%s: %w", child, err)
		}
		all[child] = fields{Properties: keys(props), Required: keys(req)}
		if err := r.inline(all, child, sub, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// hasFields says whether an inline schema declares object fields.
func hasFields(m map[string]any) bool {
	for _, key := range []string{"properties", "allOf", "oneOf", "anyOf"} {
		if _, ok := m[key]; ok {
			return true
		}
	}
	return false
}

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
