package inbox_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/notifytest"
)

type message struct {
	ID         string         `json:"id"`
	RequestID  string         `json:"requestId"`
	Category   *string        `json:"category"`
	Title      *string        `json:"title"`
	Body       string         `json:"body"`
	ActionURL  *string        `json:"actionUrl"`
	Data       map[string]any `json:"data"`
	CreatedAt  string         `json:"createdAt"`
	ReadAt     *string        `json:"readAt"`
	SeenAt     *string        `json:"seenAt"`
	ArchivedAt *string        `json:"archivedAt"`
}

type counts struct {
	Unread int `json:"unread"`
	Unseen int `json:"unseen"`
}

type page struct {
	Messages []message `json:"messages"`
	Counts   counts    `json:"counts"`
	Cursor   *string   `json:"cursor"`
	HasNext  bool      `json:"hasNext"`
}

// mint answers a token for profile id through the signed API.
func mint(t *testing.T, key *client.Client, id string) string {
	t.Helper()
	return notifytest.Data[struct {
		Token string `json:"token"`
	}](t, notifytest.Signed(t, key, "POST", "/v1/recipients/"+id+"/inbox-token", map[string]any{"ttlSeconds": 600}), http.StatusOK).Token
}

// call is a recipient route with token (header, or query when inQuery)
// from origin ("" for none); it answers the status, the body and the
// headers.
func call(t *testing.T, env *notifytest.Env, method, path, token, origin string) (int, []byte, http.Header) {
	t.Helper()
	return callAt(t, env.Owner.BaseURL, method, path, token, origin)
}

// callAt is call on the server at base.
func callAt(t *testing.T, base, method, path, token, origin string) (int, []byte, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, base+path, nil)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, b, resp.Header
}

func get[T any](t *testing.T, env *notifytest.Env, path, token string) T {
	t.Helper()
	status, b, _ := call(t, env, "GET", path, token, "")
	require.Equal(t, http.StatusOK, status, string(b))
	var v T
	require.NoError(t, json.Unmarshal(b, &v))
	return v
}

func post(t *testing.T, env *notifytest.Env, path, token string, status int) counts {
	t.Helper()
	got, b, _ := call(t, env, "POST", path, token, "")
	require.Equal(t, status, got, string(b))
	var v struct {
		Counts counts `json:"counts"`
	}
	_ = json.Unmarshal(b, &v)
	return v.Counts
}

// deliver sends n inapp messages to profile id and waits until each is sent.
func deliver(t *testing.T, key *client.Client, id string, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		res := notifytest.Send(t, key, inapp(id, "Hello", "Message "+string(rune('A'+i))))
		require.Equal(t, "sent", notifytest.Wait(t, key, res.RequestID).Status)
	}
}

// TestInboxAPI: list (cursor, filters), counts, read, seen, archive,
// unarchive, read-all and delete through a recipient token.
func TestInboxAPI(t *testing.T) {
	t.Parallel()
	env, key := setup(t)
	deliver(t, key, "u-1", 3)
	tok := mint(t, key, "u-1")

	p := get[page](t, env, "/v1/inbox/messages?limit=2", tok)
	require.Len(t, p.Messages, 2)
	require.True(t, p.HasNext)
	require.Equal(t, counts{3, 3}, p.Counts)
	require.Equal(t, "Message C", p.Messages[0].Body, "newest first")
	rest := get[page](t, env, "/v1/inbox/messages?limit=2&cursor="+*p.Cursor, tok)
	require.Len(t, rest.Messages, 1)
	require.False(t, rest.HasNext)
	a, b, c := p.Messages[0], p.Messages[1], rest.Messages[0]

	require.Equal(t, counts{3, 2}, post(t, env, "/v1/inbox/messages/"+a.ID+"/seen", tok, 200))
	require.Equal(t, counts{2, 1}, post(t, env, "/v1/inbox/messages/"+b.ID+"/read", tok, 200), "reading sees")
	require.Equal(t, counts{2, 1}, post(t, env, "/v1/inbox/messages/"+b.ID+"/read", tok, 200), "again: nothing changes")
	require.Equal(t, counts{1, 0}, post(t, env, "/v1/inbox/messages/"+c.ID+"/archive", tok, 200))
	unread := get[page](t, env, "/v1/inbox/messages?unread=true", tok)
	require.Equal(t, []string{a.ID}, ids(unread.Messages))
	archived := get[page](t, env, "/v1/inbox/messages?archived=true", tok)
	require.Equal(t, []string{c.ID}, ids(archived.Messages))
	require.NotNil(t, archived.Messages[0].ArchivedAt)

	require.Equal(t, counts{0, 0}, post(t, env, "/v1/inbox/read-all", tok, 200))
	require.Equal(t, counts{1, 1}, post(t, env, "/v1/inbox/messages/"+c.ID+"/unarchive", tok, 200))
	require.Equal(t, counts{0, 0}, post(t, env, "/v1/inbox/read-all", tok, 200), "counts are right after read-all")
	require.Equal(t, counts{0, 0}, get[struct {
		Counts counts `json:"counts"`
	}](t, env, "/v1/inbox/counts", tok).Counts)
	status, _, _ := call(t, env, "DELETE", "/v1/inbox/messages/"+c.ID, tok, "")
	require.Equal(t, http.StatusNoContent, status)
	require.Len(t, get[page](t, env, "/v1/inbox/messages", tok).Messages, 2)
	post(t, env, "/v1/inbox/messages/"+c.ID+"/read", tok, http.StatusNotFound)
	post(t, env, "/v1/inbox/messages/"+a.ID+"/bogus", tok, http.StatusNotFound)
	post(t, env, "/v1/inbox/unarchive-all", tok, http.StatusNotFound)
	status, b2, _ := call(t, env, "GET", "/v1/inbox/messages?unread=yes", tok, "")
	require.Equal(t, http.StatusBadRequest, status, string(b2))
}

func ids(ms []message) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.ID
	}
	return out
}

// TestInboxIsolation: a token for u-1 cannot read, count or change u-2's
// messages, nor another workspace's (404 for their ids); a token of one
// workspace names no profile of another.
func TestInboxIsolation(t *testing.T) {
	t.Parallel()
	env, key := setup(t)
	deliver(t, key, "u-1", 1)
	deliver(t, key, "u-2", 1)
	t1, t2 := mint(t, key, "u-1"), mint(t, key, "u-2")
	m2 := get[page](t, env, "/v1/inbox/messages", t2).Messages[0]
	require.Equal(t, []string{}, ids(get[page](t, env, "/v1/inbox/messages?unread=true&category=none", t1).Messages))
	for _, op := range []string{"read", "seen", "archive", "unarchive"} {
		post(t, env, "/v1/inbox/messages/"+m2.ID+"/"+op, t1, http.StatusNotFound)
	}
	status, _, _ := call(t, env, "DELETE", "/v1/inbox/messages/"+m2.ID, t1, "")
	require.Equal(t, http.StatusNotFound, status)
	post(t, env, "/v1/inbox/read-all", t1, 200)
	require.Equal(t, counts{1, 1}, get[page](t, env, "/v1/inbox/messages", t2).Counts, "u-2's untouched")

	other, _ := env.NewWorkspace(t, "Other", "other@example.com")
	notifytest.DashboardCall(t, other, "PUT", "/v1/recipients/u-1", map[string]any{"email": "x@example.com"}, http.StatusCreated)
	ot := notifytest.Field[string](t, notifytest.DashboardCall(t, other, "POST", "/v1/recipients/u-1/inbox-token", nil, http.StatusOK), "token")
	post(t, env, "/v1/inbox/messages/"+m2.ID+"/read", ot, http.StatusNotFound)
	require.Empty(t, get[page](t, env, "/v1/inbox/messages", ot).Messages)
	require.Equal(t, counts{1, 1}, get[page](t, env, "/v1/inbox/messages", t2).Counts)
	notifytest.DashboardCall(t, env.Owner, "POST", "/v1/recipients/nobody/inbox-token", nil, http.StatusNotFound)
}

// TestRecipientTokens: a token minted offline with the secret works; an
// expired one, one too long-lived, a forged one and one signed with the
// secret before a rotation are refused, with one 401 that echoes nothing.
func TestRecipientTokens(t *testing.T) {
	t.Parallel()
	env, key := setup(t)
	deliver(t, key, "u-1", 1)
	secret := notifytest.Field[string](t, notifytest.DashboardCall(t, env.Owner, "POST", "/v1/inbox-settings/rotate-secret", nil, http.StatusOK), "secret")
	require.True(t, strings.HasPrefix(secret, "nis_"))
	offline := client.MintInboxToken(secret, env.Workspace, "u-1", time.Now().Add(10*time.Minute))
	require.Len(t, get[page](t, env, "/v1/inbox/messages", offline).Messages, 1)
	minted := mint(t, key, "u-1")

	refused := func(tok, why string) {
		t.Helper()
		status, b, _ := call(t, env, "GET", "/v1/inbox/counts?token=x", tok, "")
		require.Equal(t, http.StatusUnauthorized, status, why)
		require.Contains(t, string(b), "Invalid or expired recipient token", why)
		require.NotContains(t, string(b), tok, why)
	}
	refused(client.MintInboxToken(secret, env.Workspace, "u-1", time.Now().Add(-time.Second)), "expired")
	refused(client.MintInboxToken(secret, env.Workspace, "u-1", time.Now().Add(48*time.Hour)), "too long-lived")
	refused(client.MintInboxToken("nis_guess", env.Workspace, "u-1", time.Now().Add(time.Minute)), "forged")
	refused(offline[:len(offline)-2]+"AA", "signature changed")
	refused("v1.e30.AAAA", "no claims")

	notifytest.DashboardCall(t, env.Owner, "POST", "/v1/inbox-settings/rotate-secret", nil, http.StatusOK)
	refused(offline, "rotated")
	refused(minted, "rotated")
	status, _, _ := call(t, env, "GET", "/v1/inbox/counts", "", "")
	require.Equal(t, http.StatusUnauthorized, status, "no token")
	status, _, _ = call(t, env, "GET", "/v1/inbox/counts", "dashboard-session-token", "")
	require.Equal(t, http.StatusForbidden, status, "a credential of another kind")

	// The token in the query string (EventSource) works too
	// (internal/server: it never reaches the access log).
	q := mint(t, key, "u-1")
	status, b, _ := call(t, env, "GET", "/v1/inbox/counts?token="+q, "", "")
	require.Equal(t, http.StatusOK, status, string(b))
}

// TestInboxCORS: a browser at an allowed origin is told so; another
// origin is refused (403, no CORS header); a preflight is answered; a
// caller without Origin needs none.
func TestInboxCORS(t *testing.T) {
	t.Parallel()
	env, key := setup(t)
	tok := mint(t, key, "u-1")
	set := notifytest.Field[map[string]any](t, notifytest.DashboardCall(t, env.Owner, "PUT", "/v1/inbox-settings",
		map[string]any{"allowedOrigins": []string{"https://App.example.com", "http://localhost:3000", "https://app.example.com/"}}, http.StatusOK),
		"inboxSettings")
	require.Equal(t, []any{"https://app.example.com", "http://localhost:3000"}, set["allowedOrigins"])
	require.Equal(t, true, set["secretSet"])

	status, _, h := call(t, env, "GET", "/v1/inbox/counts", tok, "https://app.example.com")
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "https://app.example.com", h.Get("Access-Control-Allow-Origin"))
	status, _, h = call(t, env, "GET", "/v1/inbox/counts", tok, "https://evil.example.com")
	require.Equal(t, http.StatusForbidden, status)
	require.Empty(t, h.Get("Access-Control-Allow-Origin"))
	status, _, h = call(t, env, "GET", "/v1/inbox/counts", tok, "")
	require.Equal(t, http.StatusOK, status)
	require.Empty(t, h.Get("Access-Control-Allow-Origin"))

	req, _ := http.NewRequest("OPTIONS", env.Owner.BaseURL+"/v1/inbox/messages", nil)
	req.Header.Set("Origin", "https://app.example.com")
	req.Header.Set("Access-Control-Request-Method", "GET")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNoContent, resp.StatusCode)
	require.Contains(t, resp.Header.Get("Access-Control-Allow-Headers"), "Authorization")

	p := notifytest.DashboardProblem(t, env.Owner, "PUT", "/v1/inbox-settings", map[string]any{"allowedOrigins": []string{"https://a.example.com/path"}},
		http.StatusBadRequest)
	require.Equal(t, "allowedOrigins[0] must be an origin such as https://app.example.com (scheme, host and port only)", p.Detail)
}

// TestInboxRoles: settings are read by every role and changed by admins
// and up; minting is operator and up, or a key with recipients:write.
func TestInboxRoles(t *testing.T) {
	t.Parallel()
	env, _ := setup(t)
	for _, c := range []struct {
		method, path string
		body         any
		min          string
	}{
		{"GET", "/v1/inbox-settings", nil, "viewer"},
		{"PUT", "/v1/inbox-settings", map[string]any{"allowedOrigins": []string{}}, "admin"},
		{"POST", "/v1/inbox-settings/rotate-secret", nil, "admin"},
		{"POST", "/v1/recipients/u-1/inbox-token", nil, "operator"},
	} {
		rank := map[string]int{"viewer": 0, "operator": 1, "admin": 2}
		for _, role := range []string{"viewer", "operator", "admin"} {
			want := http.StatusOK
			if rank[role] < rank[c.min] {
				want = http.StatusForbidden
			}
			notifytest.DashboardCall(t, env.Member(t, role), c.method, c.path, c.body, want)
		}
	}
	ro, _ := env.APIKey(t, "read", "recipients:read")
	r := notifytest.Signed(t, ro, "POST", "/v1/recipients/u-1/inbox-token", nil)
	require.Equal(t, http.StatusForbidden, r.Status)
	notifytest.Audit(t, env.Owner, "inbox.secret_rotate")
	notifytest.Audit(t, env.Owner, "inbox.settings_update")
}
