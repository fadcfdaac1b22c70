package e2e_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/api"
)

const zeroID = "00000000-0000-7000-8000-000000000000"

// bodyRoutes are the routes that take a JSON body, with a body whose field
// has the wrong type. Body-less actions take no fields at all.
var bodyRoutes = []struct {
	method, path string
	wrongType    string
}{
	{"POST", "/v1/auth/login", `{"email":1,"password":"x"}`},
	{"POST", "/v1/auth/select-workspace", `{"workspaceId":1}`},
	{"POST", "/v1/auth/logout", `[]`},
	{"PATCH", "/v1/workspace", `{"name":["x"]}`},
	{"POST", "/v1/workspace/members", `{"email":"a@example.com","role":1}`},
	{"PATCH", "/v1/workspace/members/{userId}", `{"role":true}`},
	{"POST", "/v1/api-keys", `{"name":"x","scopes":[1]}`},
	{"PATCH", "/v1/api-keys/{id}", `{"allowedTemplateCodes":{"a":1}}`},
	{"POST", "/v1/api-keys/{id}/rotate", `[]`},
	{"POST", "/v1/api-keys/{id}/revoke", `"revoke"`},
	{"POST", "/v1/api-keys/{id}/suspend", `1`},
	{"POST", "/v1/api-keys/{id}/resume", `true`},
	{"POST", "/v1/providers", `{"providerKind":"mailx_email","displayName":"x","enabled":1}`},
	{"PATCH", "/v1/providers/{id}", `{"displayName":{}}`},
	{"PUT", "/v1/routes", `{"routes":[{"channel":"sms","providerAccountId":"x","priority":"high"}]}`},
	{"PUT", "/v1/limits/dispatch", `{"scope":"workspace","ratePerSecond":"fast"}`},
	{"PUT", "/v1/limits/rate/workspace", `{"windowSeconds":60,"maxRequests":"many"}`},
	{"POST", "/v1/newsletter/campaigns", `{"name":1,"channel":"email"}`},
	{"PATCH", "/v1/newsletter/campaigns/{id}", `{"name":["x"]}`},
	{"POST", "/v1/newsletter/campaigns/{id}/send", `{"scheduledAt":1}`},
	{"POST", "/v1/newsletter/campaigns/{id}/cancel", `[]`},
	{"PATCH", "/v1/newsletter/settings", `{"doubleOptIn":"yes"}`},
	{"PUT", "/v1/limits/otp-fraud-guard", `{"dailyBudget":"many"}`},
}

func fill(path, id string) string {
	for strings.Contains(path, "{") {
		i, j := strings.Index(path, "{"), strings.Index(path, "}")
		path = path[:i] + id + path[j+1:]
	}
	return path
}

// TestBadInput sends malformed JSON, wrong types and unknown fields to every
// route that takes a body: always 400 problem+json, never a 5xx.
func TestBadInput(t *testing.T) {
	t.Parallel()
	e := start(t)
	// Real targets, so that a handler that skipped validation would act.
	key := createKey(t, e.Owner, map[string]any{"name": "k", "scopes": []string{"otp:send"}})
	prov := e.createProvider(t, e.Owner, "mailx_email", "p")
	memberID, _ := e.member(t, "viewer")
	r := do(t, e.Owner, "POST", "/v1/newsletter/campaigns", map[string]any{"name": "c", "channel": "email", "subject": "s", "contentText": "t"})
	requireStatus(t, r, http.StatusCreated)
	var camp struct {
		Campaign struct {
			ID string `json:"id"`
		} `json:"campaign"`
	}
	require.NoError(t, r.Decode(&camp))
	ids := map[string]string{"/v1/api-keys/": key.APIKey.ID, "/v1/providers/": prov, "/v1/workspace/members/": memberID,
		"/v1/newsletter/campaigns/": camp.Campaign.ID}

	known := map[string]bool{}
	for _, rt := range bodyRoutes {
		known[rt.method+" "+rt.path] = true
		path := rt.path
		for prefix, id := range ids {
			if strings.HasPrefix(path, prefix) {
				path = fill(path, id)
			}
		}
		c := e.Owner
		if rt.path == "/v1/auth/login" {
			c = e.anon()
		}
		bodies := map[string]string{
			"truncated":        `{"name":`,
			"not json":         `name=x`,
			"single quotes":    `{'name':'x'}`,
			"trailing data":    `{} {}`,
			"trailing garbage": `{}x`,
			"unknown field":    `{"zzUnknownField":1}`,
			"null body":        `null`,
			"wrong type":       rt.wrongType,
		}
		for name, body := range bodies {
			r := do(t, c, rt.method, path, body)
			require.Equal(t, 400, r.Status, "%s %s (%s): %s", rt.method, path, name, r.Body)
			p := e.requireProblem(t, r, 400, "SVC-40000", path)
			if name == "unknown field" {
				require.Contains(t, p.Detail, "zzUnknownField")
			}
		}
	}
	// Nothing was changed by any of it.
	keys, _ := listKeys(t, e.Owner)
	require.Equal(t, key.APIKey, keys[key.APIKey.ID])
	requireStatus(t, do(t, e.Owner, "GET", "/v1/me", nil), http.StatusOK)
	require.Equal(t, "viewer", members(t, e.Owner)[memberID].Role)
	require.Equal(t, 1, auditCount(t, e.Owner, "api_key.create"))
	require.Zero(t, auditCount(t, e.Owner, "api_key.rotate"))
	require.Zero(t, auditCount(t, e.Owner, "provider.update"))
	require.Zero(t, auditCount(t, e.Owner, "campaign.update"))
	require.Zero(t, auditCount(t, e.Owner, "campaign.send"))
	require.Zero(t, auditCount(t, e.Owner, "rate_limit.workspace.upsert"))
	r = do(t, e.Owner, "GET", "/v1/limits/dispatch", nil)
	requireStatus(t, r, http.StatusOK)
	require.NotContains(t, string(r.Body), "workspace", "no dispatch limit was stored")

	// Body-less actions still work with no body or an empty object.
	requireStatus(t, do(t, e.Owner, "POST", "/v1/api-keys/"+key.APIKey.ID+"/suspend", nil), http.StatusOK)
	requireStatus(t, do(t, e.Owner, "POST", "/v1/api-keys/"+key.APIKey.ID+"/resume", `{}`), http.StatusOK)

	// Routes added after this test was written get the generic checks.
	a := api.New(e.Daemon.APIOptions())
	for _, rt := range a.Routes() {
		if known[rt.Method+" "+rt.Path] || rt.Scope != "" || (rt.Method != "POST" && rt.Method != "PUT" && rt.Method != "PATCH") {
			continue
		}
		path := fill(rt.Path, zeroID)
		for _, body := range []string{`{"a":`, `{"zzUnknownField":1}`} {
			r := do(t, e.Owner, rt.Method, path, body)
			require.Less(t, r.Status, 500, "%s %s: %s", rt.Method, path, r.Body)
			require.Contains(t, []int{400, 403, 404}, r.Status, "%s %s %s: %s", rt.Method, path, body, r.Body)
		}
	}
}

// TestRouting: unknown routes 404, wrong methods 405, both problem+json;
// oversized bodies 413.
func TestRouting(t *testing.T) {
	t.Parallel()
	e := start(t)
	// "/" is the web console (issue 18): see internal/e2e/console.
	for _, path := range []string{"/v1/nope", "/v1", "/v2/providers", "/v1/providers/", "/v1/providers/x/y", "/v1/api-keys/x/explode", "/v1/ME"} {
		for _, c := range []*client.Client{e.Owner, e.anon()} {
			p := e.callProblem(t, c, "GET", path, nil, 404, "SVC-40400")
			require.Contains(t, p.Detail, "No route")
		}
	}
	for _, rq := range []struct{ method, path, allow string }{
		{"DELETE", "/v1/providers", "GET, HEAD, POST"},
		{"PUT", "/v1/providers/" + zeroID, "GET, HEAD, PATCH"},
		{"GET", "/v1/auth/login", "POST"},
		{"POST", "/v1/me", "GET, HEAD"},
		{"DELETE", "/v1/routes", "GET, HEAD, PUT"},
		{"GET", "/v1/api-keys/" + zeroID + "/rotate", "POST"},
		{"POST", "/v1/audit-logs", "GET, HEAD"},
		{"PATCH", "/v1/workspace/members", "GET, HEAD, POST"},
	} {
		for _, c := range []*client.Client{e.Owner, e.anon()} {
			r := do(t, c, rq.method, rq.path, nil)
			e.requireProblem(t, r, 405, "SVC-40500", rq.path)
			require.Equal(t, rq.allow, r.Header.Get("Allow"), rq.method+" "+rq.path)
		}
	}
	// The problem type derives from the configured base URL.
	r := do(t, e.Owner, "GET", "/v1/nope", nil)
	require.True(t, strings.HasPrefix(decode[problem](t, r).Type, e.Daemon.URL()+"/errors/"), "%s", r.Body)

	// Over the dashboard body limit.
	big := append([]byte(`{"displayName":"`), bytes.Repeat([]byte("a"), 8<<20)...)
	big = append(big, `"}`...)
	r = do(t, e.Owner, "POST", "/v1/providers", big)
	e.requireProblem(t, r, 413, "SVC-41300", "/v1/providers")
	require.Empty(t, listProviders(t, e.Owner))
}

// TestHostileStrings: NUL bytes, invalid UTF-8, huge values in paths,
// queries and bodies answer 4xx (PostgreSQL refuses NUL and invalid UTF-8
// in text, which must not surface as a 500).
func TestHostileStrings(t *testing.T) {
	t.Parallel()
	e := start(t)
	prov := e.createProvider(t, e.Owner, "mailx_email", "p")
	key := createKey(t, e.Owner, map[string]any{"name": "k", "scopes": []string{"otp:send"}})
	long := strings.Repeat("x", 10000)
	for _, seg := range []string{"%00", "a%00b", "%FF%FE", "%C3%28", long, "%E2%80%AE", "..%2F..%2Fetc"} {
		for _, rq := range []struct{ method, path string }{
			{"GET", "/v1/providers/"}, {"PATCH", "/v1/providers/"}, {"PATCH", "/v1/api-keys/"}, {"PATCH", "/v1/workspace/members/"},
			{"DELETE", "/v1/workspace/members/"},
		} {
			var body any
			switch rq.path {
			case "/v1/providers/", "/v1/api-keys/":
				if rq.method == "PATCH" {
					body = map[string]any{"displayName": "x"}
					if rq.path == "/v1/api-keys/" {
						body = map[string]any{"name": "x"}
					}
				}
			case "/v1/workspace/members/":
				if rq.method == "PATCH" {
					body = map[string]any{"role": "viewer"}
				}
			}
			r := do(t, e.Owner, rq.method, rq.path+seg, body)
			require.Contains(t, []int{400, 404}, r.Status, "%s %s%s: %s", rq.method, rq.path, seg, r.Body)
		}
		for _, action := range []string{"rotate", "revoke", "suspend", "resume"} {
			r := do(t, e.Owner, "POST", "/v1/api-keys/"+seg+"/"+action, nil)
			require.Contains(t, []int{400, 404}, r.Status, "%s %s: %s", action, seg, r.Body)
		}
	}
	for _, q := range []string{"action=%00", "action=%FF", "targetType=a%00", "targetType=%C3%28", "cursor=MTIzOgA", "cursor=MTIzOv8"} {
		r := do(t, e.Owner, "GET", "/v1/audit-logs?"+q, nil)
		require.Contains(t, []int{200, 400}, r.Status, "%s: %s", q, r.Body)
		if r.Status == 200 {
			require.Empty(t, decode[auditPage](t, r).Logs, q)
		}
	}

	nul := "a\u0000b"
	bad := "\xff\xfe" // json.Marshal turns it into U+FFFD, still valid
	for _, s := range []string{nul, bad, "\u202e", "\U0001F600"} {
		for _, rq := range []struct {
			method, path string
			body         map[string]any
			anon         bool
		}{
			{"POST", "/v1/auth/login", map[string]any{"email": s, "password": "x"}, true},
			{"POST", "/v1/auth/login", map[string]any{"email": "u" + s + "@example.com", "password": "x"}, true},
			{"POST", "/v1/auth/login", map[string]any{"email": e.Email, "password": e.Password, "workspaceId": s}, true},
			{"POST", "/v1/auth/select-workspace", map[string]any{"workspaceId": s}, false},
			{"PATCH", "/v1/workspace", map[string]any{"name": s}, false},
			{"POST", "/v1/workspace/members", map[string]any{"email": "m" + s + "@example.com", "role": "viewer"}, false},
			{"POST", "/v1/workspace/members", map[string]any{"email": "m@example.com", "role": s}, false},
			{"POST", "/v1/api-keys", map[string]any{"name": s, "scopes": []string{"otp:send"}}, false},
			{"POST", "/v1/api-keys", map[string]any{"name": "n", "scopes": []string{"otp:send"}, "allowedTemplateCodes": []string{s}}, false},
			{"PATCH", "/v1/api-keys/" + key.APIKey.ID, map[string]any{"name": s}, false},
			{"POST", "/v1/providers", map[string]any{"providerKind": "mailx_email", "displayName": s, "configJson": map[string]string{s: s}}, false},
			{"POST", "/v1/providers", map[string]any{"providerKind": s, "displayName": "x"}, false},
			{"PATCH", "/v1/providers/" + prov, map[string]any{"displayName": s}, false},
			{"PUT", "/v1/routes", map[string]any{"routes": []route{{"channel": s, "providerAccountId": prov, "priority": 1}}}, false},
			{"PUT", "/v1/routes", map[string]any{"routes": []route{{"channel": "email", "providerAccountId": s, "priority": 1}}}, false},
		} {
			c := e.Owner
			if rq.anon {
				c = e.anon()
			}
			r := do(t, c, rq.method, rq.path, rq.body)
			require.Less(t, r.Status, 500, "%s %s %q: %s", rq.method, rq.path, s, r.Body)
		}
	}
	requireStatus(t, do(t, e.Owner, "GET", "/v1/providers", nil), http.StatusOK)
	requireStatus(t, do(t, e.Owner, "GET", "/v1/api-keys", nil), http.StatusOK)
	requireStatus(t, do(t, e.Owner, "GET", "/v1/audit-logs", nil), http.StatusOK)
	requireStatus(t, do(t, e.Owner, "GET", "/v1/workspace", nil), http.StatusOK)
}
