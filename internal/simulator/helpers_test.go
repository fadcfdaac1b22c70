package simulator

import (
	"bytes"
	"crypto"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// env is one simulator behind an httptest.Server.
type env struct {
	t   *testing.T
	sim *Simulator
	srv *httptest.Server
}

func newEnv(t *testing.T) *env {
	t.Helper()
	sim := New()
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	return &env{t: t, sim: sim, srv: srv}
}

type resp struct {
	status int
	header http.Header
	body   []byte
}

func (r *resp) obj(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(r.body, &m), "body: %s", r.body)
	return m
}

func (r *resp) list(t *testing.T) []any {
	t.Helper()
	var l []any
	require.NoError(t, json.Unmarshal(r.body, &l), "body: %s", r.body)
	return l
}

func (e *env) do(method, path string, hdr map[string]string, body []byte) *resp {
	e.t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+path, bytes.NewReader(body))
	require.NoError(e.t, err)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := e.srv.Client().Do(req)
	require.NoError(e.t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(e.t, err)
	return &resp{status: res.StatusCode, header: res.Header, body: b}
}

func (e *env) form(path string, vals url.Values) *resp {
	e.t.Helper()
	return e.do(http.MethodPost, path, map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, []byte(vals.Encode()))
}

func (e *env) postJSON(path string, hdr map[string]string, v any) *resp {
	e.t.Helper()
	b, ok := v.([]byte)
	if !ok {
		var err error
		b, err = json.Marshal(v)
		require.NoError(e.t, err)
	}
	h := map[string]string{"Content-Type": "application/json"}
	for k, v := range hdr {
		h[k] = v
	}
	return e.do(http.MethodPost, path, h, b)
}

// fault queues a fault through the control API.
func (e *env) fault(f map[string]any) {
	e.t.Helper()
	r := e.postJSON("/_sim/faults", nil, f)
	require.Equal(e.t, http.StatusCreated, r.status, "fault %v: %s", f, r.body)
}

func (e *env) messages(kind, to string) []Message {
	return e.sim.Messages(kind, to, 0)
}

// ---- vendor credentials built as the real clients build them ----

// solapiHeader signs like the Solapi SDKs: HMAC-SHA256(secret, date+salt).
func solapiHeader(date time.Time, salt string) string {
	d := date.UTC().Format(time.RFC3339)
	m := hmac.New(sha256.New, []byte("test-secret"))
	m.Write([]byte(d + salt))
	return fmt.Sprintf("HMAC-SHA256 apiKey=NCSTESTKEY, date=%s, salt=%s, signature=%s", d, salt, hex.EncodeToString(m.Sum(nil)))
}

var saltSeq struct {
	sync.Mutex
	n int
}

// freshSolapi returns a header with a new salt, as every request needs.
func freshSolapi() map[string]string {
	saltSeq.Lock()
	saltSeq.n++
	n := saltSeq.n
	saltSeq.Unlock()
	return map[string]string{"Authorization": solapiHeader(time.Now(), fmt.Sprintf("salt%028d", n))}
}

// sigv4 builds a Signature V4 header set for SES with a real signature over
// a simplified canonical request (the simulator checks shape only).
func sigv4(now time.Time, region string) map[string]string {
	amz := now.UTC().Format("20060102T150405Z")
	day := amz[:8]
	m := hmac.New(sha256.New, []byte("AWS4secret"))
	m.Write([]byte(amz))
	return map[string]string{
		"X-Amz-Date": amz,
		"Authorization": fmt.Sprintf("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/%s/%s/ses/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=%s",
			day, region, hex.EncodeToString(m.Sum(nil))),
	}
}

var (
	rsaOnce sync.Once
	rsaKey  *rsa.PrivateKey
)

// jwt signs claims with RS256 like a service-account client.
func jwt(t *testing.T, header, claims map[string]any) string {
	t.Helper()
	rsaOnce.Do(func() {
		var err error
		rsaKey, err = rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
	})
	enc := func(v any) string {
		b, err := json.Marshal(v)
		require.NoError(t, err)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	signing := enc(header) + "." + enc(claims)
	sum := sha256.Sum256([]byte(signing))
	sig, err := rsa.SignPKCS1v15(rand.Reader, rsaKey, crypto.SHA256, sum[:])
	require.NoError(t, err)
	return signing + "." + base64.RawURLEncoding.EncodeToString(sig)
}

func (e *env) serviceAccountClaims() map[string]any {
	now := time.Now().Unix()
	return map[string]any{
		"iss": "sim@project.iam.gserviceaccount.com", "scope": fcmScope,
		"aud": e.srv.URL + "/token", "iat": now, "exp": now + 3600,
	}
}

// fcmAccessToken runs the JWT grant and returns the access token.
func (e *env) fcmAccessToken() string {
	e.t.Helper()
	a := jwt(e.t, map[string]any{"alg": "RS256", "typ": "JWT", "kid": "key1"}, e.serviceAccountClaims())
	r := e.form("/token", url.Values{"grant_type": {fcmGrantType}, "assertion": {a}})
	require.Equal(e.t, http.StatusOK, r.status, "%s", r.body)
	return r.obj(e.t)["access_token"].(string)
}

// discardWriter is a minimal ResponseWriter for benchmarks.
type discardWriter struct {
	h      http.Header
	status int
}

func (w *discardWriter) Header() http.Header { return w.h }
func (w *discardWriter) WriteHeader(s int)   { w.status = s }
func (w *discardWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return len(b), nil
}

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }
