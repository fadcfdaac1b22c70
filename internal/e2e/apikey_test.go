package e2e_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/api"
	"github.com/notifyd/notifyd/internal/gate"
	"github.com/notifyd/notifyd/internal/notify"
)

type apiKeyJSON struct {
	ID                   string   `json:"id"`
	KeyID                string   `json:"keyId"`
	Name                 string   `json:"name"`
	Scopes               []string `json:"scopes"`
	AllowedTemplateCodes []string `json:"allowedTemplateCodes"`
	Status               string   `json:"status"`
	CreatedAt            string   `json:"createdAt"`
	LastUsedAt           *string  `json:"lastUsedAt"`
}

type newKeyBody struct {
	APIKey     apiKeyJSON `json:"apiKey"`
	Key        string     `json:"key"`
	HMACSecret string     `json:"hmacSecret"`
}

func createKey(t testing.TB, c *client.Client, body any) newKeyBody {
	t.Helper()
	r := do(t, c, "POST", "/v1/api-keys", body)
	requireStatus(t, r, http.StatusCreated)
	k := decode[newKeyBody](t, r)
	require.NotEmpty(t, k.Key)
	require.NotEmpty(t, k.HMACSecret)
	return k
}

func listKeys(t testing.TB, c *client.Client) (map[string]apiKeyJSON, []byte) {
	t.Helper()
	r := do(t, c, "GET", "/v1/api-keys", nil)
	requireStatus(t, r, http.StatusOK)
	out := map[string]apiKeyJSON{}
	for _, k := range decode[struct {
		APIKeys []apiKeyJSON `json:"apiKeys"`
	}](t, r).APIKeys {
		out[k.ID] = k
	}
	return out, r.Body
}

// verify runs the daemon's signature check on a request signed with
// hmacSecret now, with a fresh nonce.
func verify(t testing.TB, e *env, key, hmacSecret, method, target string, body []byte) (*notify.APIKey, error) {
	t.Helper()
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	nonce := client.NewNonce()
	return e.Daemon.Gate.VerifySignature(context.Background(), gate.SignedRequest{
		APIKey: key, Timestamp: ts, Nonce: nonce, Signature: client.Sign(hmacSecret, method, target, ts, nonce, body),
		Method: method, Target: target, Body: body,
	})
}

func requireAuthFails(t testing.TB, detail string, k *notify.APIKey, err error) {
	t.Helper()
	require.Nil(t, k)
	ne, ok := notify.AsError(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, notify.CodeUnauthorized, ne.Code)
	require.Equal(t, detail, ne.Detail)
}

func TestAPIKeys(t *testing.T) {
	t.Parallel()
	e := start(t)
	me := decode[meBody](t, do(t, e.Owner, "GET", "/v1/me", nil))

	k := createKey(t, e.Owner, map[string]any{"name": " Backend ", "scopes": []string{"notifications:send", "notifications:read", "notifications:send"}})
	require.Equal(t, "Backend", k.APIKey.Name)
	require.Equal(t, []string{"notifications:send", "notifications:read"}, k.APIKey.Scopes)
	require.Nil(t, k.APIKey.AllowedTemplateCodes)
	require.Equal(t, "active", k.APIKey.Status)
	require.Nil(t, k.APIKey.LastUsedAt)
	require.True(t, strings.HasPrefix(k.Key, k.APIKey.KeyID+"."), k.Key)
	keySecret := strings.TrimPrefix(k.Key, k.APIKey.KeyID+".")
	require.GreaterOrEqual(t, len(keySecret), 32)
	require.GreaterOrEqual(t, len(k.HMACSecret), 32)
	l := requireAudit(t, e.Owner, "api_key.create", k.APIKey.ID)
	require.Equal(t, "api_key", l.TargetType)
	require.Equal(t, me.User.ID, *l.ActorUserID)

	// Secrets are shown once: never in the list nor the audit log.
	keys, raw := listKeys(t, e.Owner)
	require.Equal(t, k.APIKey, keys[k.APIKey.ID])
	for _, s := range []string{keySecret, k.HMACSecret} {
		require.NotContains(t, string(raw), s)
		require.NotContains(t, string(do(t, e.Owner, "GET", "/v1/audit-logs?limit=200", nil).Body), s)
	}
	require.NotContains(t, string(raw), "hmacSecret")

	// The key authenticates; lastUsedAt is set.
	got, err := verify(t, e, k.Key, k.HMACSecret, "POST", "/v1/notifications", []byte(`{}`))
	require.NoError(t, err)
	require.Equal(t, k.APIKey.ID, got.ID)
	keys, _ = listKeys(t, e.Owner)
	require.NotNil(t, keys[k.APIKey.ID].LastUsedAt)

	// Template list: [] allows none, null allows all.
	t2 := createKey(t, e.Owner, map[string]any{"name": "Tpl", "scopes": []string{"otp:send"}, "allowedTemplateCodes": []string{"welcome", "otp"}})
	require.Equal(t, []string{"welcome", "otp"}, t2.APIKey.AllowedTemplateCodes)

	// Patch name, scopes and templates (api_key.update).
	r := do(t, e.Owner, "PATCH", "/v1/api-keys/"+t2.APIKey.ID, map[string]any{"name": "Renamed", "scopes": []string{"otp:verify"}, "allowedTemplateCodes": []string{}})
	requireStatus(t, r, http.StatusOK)
	p := decode[struct {
		APIKey apiKeyJSON `json:"apiKey"`
	}](t, r).APIKey
	require.Equal(t, "Renamed", p.Name)
	require.Equal(t, []string{"otp:verify"}, p.Scopes)
	require.Equal(t, []string{}, p.AllowedTemplateCodes)
	keys, _ = listKeys(t, e.Owner)
	require.Equal(t, []string{}, keys[t2.APIKey.ID].AllowedTemplateCodes)
	r = do(t, e.Owner, "PATCH", "/v1/api-keys/"+t2.APIKey.ID, map[string]any{"allowedTemplateCodes": nil})
	requireStatus(t, r, http.StatusOK)
	p = decode[struct {
		APIKey apiKeyJSON `json:"apiKey"`
	}](t, r).APIKey
	require.Nil(t, p.AllowedTemplateCodes)
	require.Equal(t, "Renamed", p.Name, "absent fields stay")
	require.Equal(t, []string{"otp:verify"}, p.Scopes)
	require.Equal(t, 2, auditCount(t, e.Owner, "api_key.update"))
	// The secrets survive a patch.
	_, err = verify(t, e, t2.Key, t2.HMACSecret, "GET", "/x", nil)
	require.NoError(t, err)

	// Validation.
	for _, body := range []string{
		`{"scopes":["otp:send"]}`, `{"name":"x"}`, `{"name":"","scopes":["otp:send"]}`, `{"name":"x","scopes":[]}`,
		`{"name":"x","scopes":["admin"]}`, `{"name":"x","scopes":"otp:send"}`, `{"name":"` + strings.Repeat("n", 121) + `","scopes":["otp:send"]}`,
		`{"name":"x","scopes":["otp:send"],"allowedTemplateCodes":[""]}`, `{"name":"x","scopes":["otp:send"],"key":"mine"}`,
		`{"name":null,"scopes":["otp:send"]}`, `{"name":"x","scopes":null}`, `{"name":"x","scopes":["otp:send"],"allowedTemplateCodes":"a"}`,
	} {
		e.callProblem(t, e.Owner, "POST", "/v1/api-keys", body, 400, "SVC-40000")
	}
	for _, body := range []string{`{"name":""}`, `{"scopes":[]}`, `{"scopes":["nope"]}`, `{"status":"revoked"}`, `{"name":null}`, `{"keyId":"x"}`} {
		e.callProblem(t, e.Owner, "PATCH", "/v1/api-keys/"+t2.APIKey.ID, body, 400, "SVC-40000")
	}
	const missing = "00000000-0000-7000-8000-000000000000"
	e.callProblem(t, e.Owner, "PATCH", "/v1/api-keys/"+missing, map[string]any{"name": "x"}, 404, "SVC-40400")
	for _, action := range []string{"rotate", "revoke", "suspend", "resume"} {
		e.callProblem(t, e.Owner, "POST", "/v1/api-keys/"+missing+"/"+action, nil, 404, "SVC-40400")
	}

	// Rotate: a new key secret and HMAC secret, shown once; the old ones stop at once.
	r = do(t, e.Owner, "POST", "/v1/api-keys/"+k.APIKey.ID+"/rotate", nil)
	requireStatus(t, r, http.StatusOK)
	rot := decode[newKeyBody](t, r)
	require.Equal(t, k.APIKey.ID, rot.APIKey.ID)
	require.Equal(t, k.APIKey.KeyID, rot.APIKey.KeyID)
	require.NotEqual(t, k.Key, rot.Key)
	require.NotEqual(t, k.HMACSecret, rot.HMACSecret)
	require.True(t, strings.HasPrefix(rot.Key, k.APIKey.KeyID+"."))
	got, err = verify(t, e, k.Key, k.HMACSecret, "GET", "/x", nil)
	requireAuthFails(t, "Invalid API key", got, err)
	got, err = verify(t, e, rot.Key, k.HMACSecret, "GET", "/x", nil)
	requireAuthFails(t, "Invalid signature", got, err)
	got, err = verify(t, e, k.Key, rot.HMACSecret, "GET", "/x", nil)
	requireAuthFails(t, "Invalid API key", got, err)
	_, err = verify(t, e, rot.Key, rot.HMACSecret, "GET", "/x", nil)
	require.NoError(t, err)
	requireAudit(t, e.Owner, "api_key.rotate", k.APIKey.ID)
	_, raw = listKeys(t, e.Owner)
	require.NotContains(t, string(raw), rot.HMACSecret)
	require.NotContains(t, string(raw), strings.TrimPrefix(rot.Key, k.APIKey.KeyID+"."))

	// Suspend stops the key at once; resume brings it back.
	r = do(t, e.Owner, "POST", "/v1/api-keys/"+k.APIKey.ID+"/suspend", nil)
	requireStatus(t, r, http.StatusOK)
	require.Equal(t, "suspended", decode[newKeyBody](t, r).APIKey.Status)
	require.Empty(t, decode[newKeyBody](t, r).Key, "suspend shows no secret")
	got, err = verify(t, e, rot.Key, rot.HMACSecret, "GET", "/x", nil)
	requireAuthFails(t, "Invalid API key", got, err)
	requireAudit(t, e.Owner, "api_key.suspend", k.APIKey.ID)
	keys, _ = listKeys(t, e.Owner)
	require.Equal(t, "suspended", keys[k.APIKey.ID].Status)
	r = do(t, e.Owner, "POST", "/v1/api-keys/"+k.APIKey.ID+"/resume", nil)
	requireStatus(t, r, http.StatusOK)
	require.Equal(t, "active", decode[newKeyBody](t, r).APIKey.Status)
	_, err = verify(t, e, rot.Key, rot.HMACSecret, "GET", "/x", nil)
	require.NoError(t, err)
	requireAudit(t, e.Owner, "api_key.resume", k.APIKey.ID)

	// Revoke is final.
	r = do(t, e.Owner, "POST", "/v1/api-keys/"+k.APIKey.ID+"/revoke", nil)
	requireStatus(t, r, http.StatusOK)
	require.Equal(t, "revoked", decode[newKeyBody](t, r).APIKey.Status)
	requireAudit(t, e.Owner, "api_key.revoke", k.APIKey.ID)
	got, err = verify(t, e, rot.Key, rot.HMACSecret, "GET", "/x", nil)
	requireAuthFails(t, "Invalid API key", got, err)
	for _, action := range []string{"resume", "suspend", "rotate", "revoke"} {
		e.callProblem(t, e.Owner, "POST", "/v1/api-keys/"+k.APIKey.ID+"/"+action, nil, 409, "SVC-40900")
	}
	e.callProblem(t, e.Owner, "PATCH", "/v1/api-keys/"+k.APIKey.ID, map[string]any{"name": "back"}, 409, "SVC-40900")
	got, err = verify(t, e, rot.Key, rot.HMACSecret, "GET", "/x", nil)
	requireAuthFails(t, "Invalid API key", got, err)
	keys, _ = listKeys(t, e.Owner)
	require.Equal(t, "revoked", keys[k.APIKey.ID].Status)
	require.Len(t, keys, 2)

	// Every action is audited once, with the SPEC names.
	for action, n := range map[string]int{"api_key.create": 2, "api_key.update": 2, "api_key.rotate": 1, "api_key.suspend": 1, "api_key.resume": 1, "api_key.revoke": 1} {
		require.Equal(t, n, auditCount(t, e.Owner, action), action)
	}
	for _, l := range audit(t, e.Owner, "targetType=api_key&limit=200").Logs {
		require.True(t, strings.HasPrefix(l.Action, "api_key."), l.Action)
		require.Equal(t, me.User.ID, *l.ActorUserID)
	}
}

// TestSignedRoutes sends real signed requests to every HMAC route that
// exists (none in the foundation: then only the scope table is checked).
func TestSignedRoutes(t *testing.T) {
	t.Parallel()
	e := start(t)
	a := api.New(e.Daemon.APIOptions())
	var signed []api.Route
	for _, rt := range a.Routes() {
		if rt.Scope != "" {
			signed = append(signed, rt)
		}
	}
	require.NotEmpty(t, signed, "the Notification API has signed routes")
	full, _, err := e.Owner.CreateAPIKey(context.Background(), "full", notify.Scopes...)
	require.NoError(t, err)
	recordClient(full)
	const id = "00000000-0000-7000-8000-000000000000"
	for _, rt := range signed {
		path := rt.Path
		for strings.Contains(path, "{") {
			i, j := strings.Index(path, "{"), strings.Index(path, "}")
			path = path[:i] + id + path[j+1:]
		}
		var body any
		if rt.Method != "GET" && rt.Method != "DELETE" {
			body = map[string]any{}
		}
		ctx := context.Background()
		// The right signature passes authentication (whatever the handler then says).
		r, err := full.Signed(ctx, rt.Method, path, body)
		require.NoError(t, err)
		require.NotContains(t, []int{401, 403}, r.Status, "%s %s: %s", rt.Method, path, r.Body)
		// No signature, a wrong secret, a key without the scope.
		r, err = e.anon().Dashboard(ctx, rt.Method, path, body)
		require.NoError(t, err)
		e.requireProblem(t, r, 401, "SVC-40100", path)
		bad := *full
		bad.HMACSecret = "wrong"
		r, err = bad.Signed(ctx, rt.Method, path, body)
		require.NoError(t, err)
		require.Equal(t, "Invalid signature", e.requireProblem(t, r, 401, "SVC-40100", path).Detail)
		var others []string
		for _, s := range notify.Scopes {
			if s != rt.Scope {
				others = append(others, s)
			}
		}
		narrow, _, err := e.Owner.CreateAPIKey(ctx, "narrow", others...)
		require.NoError(t, err)
		recordClient(narrow)
		r, err = narrow.Signed(ctx, rt.Method, path, body)
		require.NoError(t, err)
		require.Equal(t, "API key missing required scope: "+rt.Scope, e.requireProblem(t, r, 403, "SVC-40300", path).Detail)
		// The query string is part of the signed target.
		r, err = full.Signed(ctx, rt.Method, path+"?x=1", body)
		require.NoError(t, err)
		require.NotContains(t, []int{401, 403}, r.Status, "%s %s?x=1: %s", rt.Method, path, r.Body)
	}
}

// signedRequest sends one Notification API request with explicit headers:
// the signature covers signTarget and signBody, the request goes to target
// with body.
type signedRequest struct {
	method, target, signTarget string
	body, signBody             []byte
	key, secret, nonce         string
	ts                         int64
}

func (e *env) sendSigned(t testing.TB, s signedRequest) *client.Response {
	t.Helper()
	if s.signTarget == "" {
		s.signTarget = s.target
	}
	if s.signBody == nil {
		s.signBody = s.body
	}
	if s.nonce == "" {
		s.nonce = client.NewNonce()
	}
	if s.ts == 0 {
		s.ts = time.Now().Unix()
	}
	ts := strconv.FormatInt(s.ts, 10)
	req, err := http.NewRequest(s.method, e.Daemon.URL()+s.target, bytes.NewReader(s.body))
	require.NoError(t, err)
	req.Header.Set("X-API-Key", s.key)
	req.Header.Set("X-Timestamp", ts)
	req.Header.Set("X-Nonce", s.nonce)
	req.Header.Set("X-Signature", client.Sign(s.secret, s.method, s.signTarget, ts, s.nonce, s.signBody))
	resp, err := (&http.Client{Transport: transport, Timeout: 20 * time.Second}).Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return &client.Response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// TestSignedHTTP checks the HMAC signature through real HTTP requests to
// the Notification API: rotation, suspension and revocation take effect at
// once; replay, stale timestamps, unsigned query strings and tampered
// bodies are refused with 401 and the detail of API-DECISIONS section 3.
func TestSignedHTTP(t *testing.T) {
	t.Parallel()
	e := start(t)
	have := map[string]bool{}
	for _, rt := range api.New(e.Daemon.APIOptions()).Routes() {
		have[rt.Method+" "+rt.Path] = rt.Scope != ""
	}
	require.True(t, have["GET /v1/notifications/{requestId}"] && have["POST /v1/notifications"], "the Notification API routes exist")
	k := createKey(t, e.Owner, map[string]any{"name": "rw", "scopes": []string{"notifications:read", "notifications:send"}})
	target := "/v1/notifications/" + zeroID // authenticated: 404, refused: 401
	get := func(s signedRequest) *client.Response {
		if s.method == "" {
			s.method = "GET"
		}
		if s.target == "" {
			s.target = target
		}
		if s.key == "" {
			s.key, s.secret = k.Key, k.HMACSecret
		}
		return e.sendSigned(t, s)
	}
	refused := func(r *client.Response, path, detail string) {
		t.Helper()
		p := e.requireProblem(t, r, 401, "SVC-40100", path)
		require.Equal(t, detail, p.Detail)
		require.NotContains(t, string(r.Body), `"data"`, "problems are not enveloped")
	}
	requireStatus(t, get(signedRequest{}), 404)
	requireStatus(t, get(signedRequest{target: target + "?x=1&y=%20"}), 404)

	// Replay: the very same headers twice.
	n := client.NewNonce()
	now := time.Now().Unix()
	requireStatus(t, get(signedRequest{nonce: n, ts: now}), 404)
	refused(get(signedRequest{nonce: n, ts: now}), target, "Replay detected")
	// Stale or future timestamps.
	refused(get(signedRequest{ts: now - 301}), target, "Timestamp outside tolerance")
	// Read the clock again: on a loaded machine seconds pass between calls,
	// and now+301 taken earlier would be inside the tolerance by now.
	refused(get(signedRequest{ts: time.Now().Unix() + 305}), target, "Timestamp outside tolerance")
	requireStatus(t, get(signedRequest{ts: now - 250}), 404)
	// The query string is part of the signed target.
	refused(get(signedRequest{target: target + "?x=1", signTarget: target}), target, "Invalid signature")
	refused(get(signedRequest{target: target, signTarget: target + "?x=1"}), target, "Invalid signature")
	refused(get(signedRequest{target: target + "?x=2", signTarget: target + "?x=1"}), target, "Invalid signature")
	// The body is signed.
	refused(get(signedRequest{method: "POST", target: "/v1/notifications", body: []byte(`{"channel":"sms"}`), signBody: []byte(`{}`)}),
		"/v1/notifications", "Invalid signature")
	refused(get(signedRequest{method: "POST", target: "/v1/notifications", body: []byte(`{}`), signBody: []byte{}}),
		"/v1/notifications", "Invalid signature")
	r := get(signedRequest{method: "POST", target: "/v1/notifications", body: []byte(`{}`)})
	require.Equal(t, 400, r.Status, "%s", r.Body) // authenticated, then refused by validation
	// Wrong secret, unknown key, missing headers.
	refused(get(signedRequest{key: k.Key, secret: "not-the-secret"}), target, "Invalid signature")
	refused(get(signedRequest{key: k.APIKey.KeyID + ".guess", secret: k.HMACSecret}), target, "Invalid API key")
	refused(get(signedRequest{key: "nk_ffffffffffffffffffffffff.x", secret: k.HMACSecret}), target, "Invalid API key")
	e.requireProblem(t, do(t, e.anon(), "GET", target, nil), 401, "SVC-40100", target)
	// Bytes PostgreSQL refuses in text never reach the store.
	refused(get(signedRequest{key: "nk_\xff\xfe.x", secret: k.HMACSecret}), target, "Invalid API key")
	refused(get(signedRequest{key: k.APIKey.KeyID + "\xff." + "x", secret: k.HMACSecret}), target, "Invalid API key")
	// A dashboard token is not an API key.
	e.requireProblem(t, do(t, e.Owner, "GET", target, nil), 401, "SVC-40100", target)

	// Missing scope: 403 with the SPEC detail.
	ro := createKey(t, e.Owner, map[string]any{"name": "ro", "scopes": []string{"notifications:read"}})
	p := e.requireProblem(t, get(signedRequest{method: "POST", target: "/v1/notifications", body: []byte(`{}`), key: ro.Key, secret: ro.HMACSecret}),
		403, "SVC-40300", "/v1/notifications")
	require.Equal(t, "API key missing required scope: notifications:send", p.Detail)
	requireStatus(t, get(signedRequest{key: ro.Key, secret: ro.HMACSecret}), 404)

	// Suspend, resume, rotate, revoke take effect at once.
	requireStatus(t, do(t, e.Owner, "POST", "/v1/api-keys/"+k.APIKey.ID+"/suspend", nil), 200)
	refused(get(signedRequest{}), target, "Invalid API key")
	requireStatus(t, do(t, e.Owner, "POST", "/v1/api-keys/"+k.APIKey.ID+"/resume", nil), 200)
	requireStatus(t, get(signedRequest{}), 404)
	rot := decode[newKeyBody](t, do(t, e.Owner, "POST", "/v1/api-keys/"+k.APIKey.ID+"/rotate", nil))
	refused(get(signedRequest{}), target, "Invalid API key")
	refused(get(signedRequest{key: rot.Key, secret: k.HMACSecret}), target, "Invalid signature")
	requireStatus(t, get(signedRequest{key: rot.Key, secret: rot.HMACSecret}), 404)
	requireStatus(t, do(t, e.Owner, "POST", "/v1/api-keys/"+k.APIKey.ID+"/revoke", nil), 200)
	refused(get(signedRequest{key: rot.Key, secret: rot.HMACSecret}), target, "Invalid API key")
}
