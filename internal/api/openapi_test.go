package api

import (
	"bufio"
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/notifyd/notifyd/openapi"
)

// openAPIOp is what the test reads of one operation of openapi/openapi.yaml.
type openAPIOp struct {
	roles      []string // x-roles, nil when absent
	scope      string   // x-scope
	hasScope   bool
	publicAuth bool // security: []
}

// scanOpenAPI reads the paths section of the document with a line scan
// (no YAML dependency): "  /path:" opens a path item, "    get:" and the
// other methods open an operation, and the operation's own x-roles (flow
// list), x-scope and "security: []" lines are recorded. It relies on the
// document's two-space indentation.
func scanOpenAPI(t *testing.T, doc []byte) map[string]*openAPIOp {
	t.Helper()
	ops := map[string]*openAPIOp{}
	var inPaths bool
	var path string
	var op *openAPIOp
	sc := bufio.NewScanner(bytes.NewReader(doc))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimRight(sc.Text(), " \t\r")
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		indent := len(line) - len(strings.TrimLeft(line, " "))
		if indent == 0 {
			inPaths = line == "paths:"
			path, op = "", nil
			continue
		}
		if !inPaths {
			continue
		}
		switch {
		case indent == 2:
			op = nil
			path = ""
			if strings.HasPrefix(trimmed, "/") && strings.HasSuffix(trimmed, ":") {
				path = strings.TrimSuffix(trimmed, ":")
			}
		case indent == 4:
			op = nil
			method := strings.ToUpper(strings.TrimSuffix(trimmed, ":"))
			switch method {
			case "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS":
				if path == "" {
					t.Fatalf("openapi.yaml:%d: operation %s outside a path", n, method)
				}
				key := method + " " + path
				if ops[key] != nil {
					t.Fatalf("openapi.yaml:%d: %s is documented twice", n, key)
				}
				op = &openAPIOp{}
				ops[key] = op
			}
		case indent == 6 && op != nil:
			k, v, ok := strings.Cut(trimmed, ":")
			if !ok {
				continue
			}
			v = strings.TrimSpace(v)
			switch k {
			case "x-roles":
				if !strings.HasPrefix(v, "[") || !strings.HasSuffix(v, "]") {
					t.Fatalf("openapi.yaml:%d: x-roles must be a one-line flow list, got %q", n, v)
				}
				op.roles = []string{}
				for r := range strings.SplitSeq(strings.Trim(v, "[]"), ",") {
					if r = strings.Trim(strings.TrimSpace(r), `"'`); r != "" {
						op.roles = append(op.roles, r)
					}
				}
			case "x-scope":
				op.scope, op.hasScope = strings.Trim(v, `"'`), true
			case "security":
				op.publicAuth = v == "[]"
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return ops
}

func TestOpenAPIVersion(t *testing.T) {
	for line := range strings.SplitSeq(string(openapi.OpenAPI), "\n") {
		if strings.TrimRight(line, " \r") == "openapi: 3.1.0" {
			return
		}
	}
	t.Fatal("openapi/openapi.yaml does not declare openapi: 3.1.0")
}

// TestOpenAPICoversRoutes fails when a route of the route table is missing
// from openapi/openapi.yaml, or documented with other roles, scope or
// authentication than the table gives it.
func TestOpenAPICoversRoutes(t *testing.T) {
	ops := scanOpenAPI(t, openapi.OpenAPI)
	if len(ops) == 0 {
		t.Fatal("no operations found in the paths section of openapi/openapi.yaml")
	}
	a := New(Options{BaseURL: "http://x"})
	routes := a.Routes()
	if len(routes) == 0 {
		t.Fatal("the route table is empty")
	}
	for _, rt := range routes {
		key := rt.Method + " " + rt.Path
		op := ops[key]
		if op == nil {
			t.Errorf("%s is registered but not documented in openapi/openapi.yaml", key)
			continue
		}
		switch rt.auth {
		case authDashboard, authEither:
			want := make([]string, len(rt.Roles))
			for i, r := range rt.Roles {
				want[i] = string(r)
			}
			got := slices.Clone(op.roles)
			slices.Sort(want)
			slices.Sort(got)
			if op.roles == nil {
				t.Errorf("%s: openapi/openapi.yaml has no x-roles; the route table allows %v", key, want)
			} else if !slices.Equal(got, want) {
				t.Errorf("%s: openapi/openapi.yaml x-roles %v, the route table allows %v", key, got, want)
			}
		}
		switch rt.auth {
		case authSigned, authEither:
			if !op.hasScope || op.scope != rt.Scope {
				t.Errorf("%s: openapi/openapi.yaml x-scope %q, the route table requires %q", key, op.scope, rt.Scope)
			}
		case authPublic:
			if !op.publicAuth {
				t.Errorf("%s: public route, but openapi/openapi.yaml does not declare security: []", key)
			}
		}
		if rt.auth != authDashboard && rt.auth != authEither && op.roles != nil {
			t.Errorf("%s: openapi/openapi.yaml has x-roles but the route needs no role", key)
		}
		if rt.auth != authSigned && rt.auth != authEither && op.hasScope {
			t.Errorf("%s: openapi/openapi.yaml has x-scope but the route is not signed", key)
		}
	}
}
