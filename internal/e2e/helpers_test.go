// Package e2e_test drives the whole daemon over HTTP: every Dashboard API
// route that exists, on SQLite or (with NOTIFYD_TEST_DATABASE_URL) on
// PostgreSQL.
//
// Every response of the suite goes through one recording transport.
// TestMain checks, after all tests ran, that no response was a 5xx and that
// no planted provider secret (see plantSecret) appears in any body.
package e2e_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/notifytest"
)

// recorded is one response seen by the suite.
type recorded struct {
	method, path string
	status       int
	body         []byte
}

var (
	recMu     sync.Mutex
	responses []recorded
	secrets   = map[string]bool{} // planted configJson values
)

// recorder keeps a copy of every response body.
type recorder struct{ next http.RoundTripper }

func (r recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(b))
	recMu.Lock()
	responses = append(responses, recorded{method: req.Method, path: req.URL.RequestURI(), status: resp.StatusCode, body: b})
	recMu.Unlock()
	return resp, nil
}

var transport = recorder{next: &http.Transport{MaxIdleConnsPerHost: 16, IdleConnTimeout: 5 * time.Second}}

// plantSecret returns a unique value for a configJson entry and registers
// it: no response body of the suite may ever contain it.
func plantSecret(t testing.TB) string {
	t.Helper()
	s := "planted-secret-" + randHex(12)
	recMu.Lock()
	secrets[s] = true
	recMu.Unlock()
	return s
}

// leaks reports every recorded body holding one of the given secrets (all
// planted secrets when none are given).
func leaks(only ...string) []string {
	recMu.Lock()
	defer recMu.Unlock()
	check := secrets
	if len(only) > 0 {
		check = map[string]bool{}
		for _, s := range only {
			check[s] = true
		}
	}
	var out []string
	for _, r := range responses {
		for s := range check {
			if bytes.Contains(r.body, []byte(s)) {
				out = append(out, fmt.Sprintf("%s %s -> %d holds %s: %s", r.method, r.path, r.status, s, r.body))
			}
		}
	}
	return out
}

func TestMain(m *testing.M) {
	code := m.Run()
	recMu.Lock()
	n := len(responses)
	var bad []string
	for _, r := range responses {
		if r.status >= 500 {
			bad = append(bad, fmt.Sprintf("%s %s -> %d %s", r.method, r.path, r.status, r.body))
		}
	}
	recMu.Unlock()
	bad = append(bad, leaks()...)
	if len(bad) > 0 {
		fmt.Fprintf(os.Stderr, "e2e: %d of %d recorded responses break suite-wide rules (no 5xx, no planted secret):\n  %s\n",
			len(bad), n, strings.Join(bad, "\n  "))
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// env is a running daemon whose owner client records its responses.
type env struct {
	*notifytest.Env
	t testing.TB
}

func start(t testing.TB) *env {
	t.Helper()
	e := notifytest.StartDaemon(t)
	e.Owner.HTTP.Transport = transport
	return &env{Env: e, t: t}
}

// base is the daemon's base URL (problem `type` prefix).
func (e *env) base() string { return e.Daemon.Config.BaseURL }

// anon is a client without credentials.
func (e *env) anon() *client.Client {
	c := client.New(e.Daemon.URL())
	c.HTTP.Transport = transport
	return c
}

// withToken is a client carrying token.
func (e *env) withToken(token string) *client.Client {
	c := e.anon()
	c.Token = token
	return c
}

// recordClient makes c record its responses.
func recordClient(c *client.Client) *client.Client {
	c.HTTP.Transport = transport
	return c
}

// loginBody is the answer of login and select-workspace.
type loginBody struct {
	AccessToken string `json:"accessToken"`
	TokenType   string `json:"tokenType"`
	ExpiresAt   string `json:"expiresAt"`
	User        struct {
		ID    string `json:"id"`
		Email string `json:"email"`
	} `json:"user"`
	Workspace *struct {
		ID   string `json:"id"`
		Name string `json:"name"`
		Role string `json:"role"`
	} `json:"workspace"`
}

// login logs in and returns a client carrying the new token.
func (e *env) login(t testing.TB, email, password, workspaceID string) (*client.Client, loginBody) {
	t.Helper()
	in := map[string]string{"email": email, "password": password}
	if workspaceID != "" {
		in["workspaceId"] = workspaceID
	}
	r := do(t, e.anon(), "POST", "/v1/auth/login", in)
	requireStatus(t, r, http.StatusOK)
	lb := decode[loginBody](t, r)
	require.NotEmpty(t, lb.AccessToken)
	return e.withToken(lb.AccessToken), lb
}

// member adds a member with role and password to the owner's workspace and
// returns its user id and a logged-in client.
func (e *env) member(t testing.TB, role string) (string, *client.Client) {
	t.Helper()
	return e.memberOf(t, e.Owner, role)
}

// memberOf adds a new user with role through admin (an owner or admin
// client) and logs the user in.
func (e *env) memberOf(t testing.TB, admin *client.Client, role string) (string, *client.Client) {
	t.Helper()
	email := role + "-" + randHex(4) + "@example.com"
	r := do(t, admin, "POST", "/v1/workspace/members", map[string]string{"email": email, "role": role, "password": "member password 1"})
	requireStatus(t, r, http.StatusCreated)
	m := decode[struct {
		Member struct {
			UserID string `json:"userId"`
			Role   string `json:"role"`
		} `json:"member"`
	}](t, r)
	require.Equal(t, role, m.Member.Role)
	c, _ := e.login(t, email, "member password 1", "")
	return m.Member.UserID, c
}

// do sends one dashboard request (bearer token of c, if any). body is
// marshalled unless it is nil, []byte or a string (sent raw).
func do(t testing.TB, c *client.Client, method, path string, body any) *client.Response {
	t.Helper()
	if s, ok := body.(string); ok {
		body = []byte(s)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	r, err := c.Dashboard(ctx, method, path, body)
	require.NoError(t, err)
	return r
}

func requireStatus(t testing.TB, r *client.Response, status int) {
	t.Helper()
	require.Equal(t, status, r.Status, "body: %s", r.Body)
}

func decode[T any](t testing.TB, r *client.Response) T {
	t.Helper()
	var v T
	require.NoError(t, json.Unmarshal(r.Body, &v), "body: %s", r.Body)
	return v
}

// problem is a problem+json body with every SPEC field.
type problem struct {
	Type      string `json:"type"`
	Title     string `json:"title"`
	Status    int    `json:"status"`
	Detail    string `json:"detail"`
	Code      string `json:"code"`
	Instance  string `json:"instance"`
	Timestamp string `json:"timestamp"`
}

// requireProblem checks a problem+json answer: status, code, type derived
// from the code, instance = the request path, a millisecond UTC timestamp.
func (e *env) requireProblem(t testing.TB, r *client.Response, status int, code, path string) problem {
	t.Helper()
	require.Equal(t, status, r.Status, "body: %s", r.Body)
	require.Equal(t, "application/problem+json", r.Header.Get("Content-Type"), "body: %s", r.Body)
	p := decode[problem](t, r)
	require.Equal(t, status, p.Status)
	require.Equal(t, code, p.Code)
	require.Equal(t, e.base()+"/errors/"+strings.ToLower(code), p.Type)
	require.NotEmpty(t, p.Title)
	require.NotEmpty(t, p.Detail)
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	require.Equal(t, path, p.Instance)
	ts, err := time.Parse("2006-01-02T15:04:05.000Z", p.Timestamp)
	require.NoError(t, err, "timestamp %q", p.Timestamp)
	require.WithinDuration(t, time.Now(), ts, time.Minute)
	return p
}

// call sends a request and requires a problem answer.
func (e *env) callProblem(t testing.TB, c *client.Client, method, path string, body any, status int, code string) problem {
	t.Helper()
	return e.requireProblem(t, do(t, c, method, path, body), status, code, path)
}

type auditPage struct {
	Logs    []notifytest.AuditEntry `json:"logs"`
	Cursor  *string                 `json:"cursor"`
	HasNext bool                    `json:"hasNext"`
}

// audit lists the audit log with a raw query string.
func audit(t testing.TB, c *client.Client, query string) auditPage {
	t.Helper()
	path := "/v1/audit-logs"
	if query != "" {
		path += "?" + query
	}
	r := do(t, c, "GET", path, nil)
	requireStatus(t, r, http.StatusOK)
	return decode[auditPage](t, r)
}

// requireAudit finds the newest entry with action and target id.
func requireAudit(t testing.TB, c *client.Client, action, targetID string) notifytest.AuditEntry {
	t.Helper()
	for _, l := range audit(t, c, "limit=200&action="+action).Logs {
		if l.TargetID == targetID {
			require.Equal(t, action, l.Action)
			return l
		}
	}
	require.Failf(t, "audit entry missing", "%s on %s", action, targetID)
	return notifytest.AuditEntry{}
}

// auditCount counts entries with action (at most 200).
func auditCount(t testing.TB, c *client.Client, action string) int {
	t.Helper()
	return len(notifytest.Audit(t, c, action))
}
