package fcm_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider"
	"github.com/notifyd/notifyd/internal/provider/fcm"
	"github.com/notifyd/notifyd/internal/provider/providertest"
)

const (
	projectID   = "demo-project"
	clientEmail = "notifyd@demo-project.iam.gserviceaccount.com"
	keyID       = "0123456789abcdef"
)

// testKey is generated once: RSA generation is the slowest step here.
var testKey = sync.OnceValue(func() *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	return k
})

func pkcs8PEM(t *testing.T) string {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(testKey())
	require.NoError(t, err)
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
}

func pkcs1PEM() string {
	der := x509.MarshalPKCS1PrivateKey(testKey())
	return string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: der}))
}

func serviceAccountJSON(t *testing.T, keyPEM, tokenURI string) string {
	t.Helper()
	b, err := json.Marshal(map[string]string{
		"type":           "service_account",
		"project_id":     projectID,
		"private_key_id": keyID,
		"private_key":    keyPEM,
		"client_email":   clientEmail,
		"token_uri":      tokenURI,
	})
	require.NoError(t, err)
	return string(b)
}

// clock is a settable test clock.
type clock struct{ ns atomic.Int64 }

func newClock() *clock {
	c := &clock{}
	c.ns.Store(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).UnixNano())
	return c
}
func (c *clock) Now() time.Time          { return time.Unix(0, c.ns.Load()).UTC() }
func (c *clock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

// fake is a Google token endpoint and an FCM send endpoint on two servers,
// since token_uri and base_url are configured apart.
type fake struct {
	t        *testing.T
	tokenURL string

	tokenCalls atomic.Int32
	sendCalls  atomic.Int32
	inFlight   atomic.Int32
	maxFlight  atomic.Int32

	mu sync.Mutex // guards the fields below
	// tokenReply answers the n-th (from 1) token call; nil issues tok-n.
	tokenReply func(n int32) (int, string)
	// sendReply answers a send made with bearer tok; nil accepts it.
	sendReply  func(tok string, body []byte) (int, string)
	assertions []string
	bodies     [][]byte
}

func newFake(t *testing.T) (*fake, *httptest.Server, *httptest.Server) {
	f := &fake{t: t}
	tokenSrv := httptest.NewServer(http.HandlerFunc(f.handleToken))
	sendSrv := httptest.NewServer(http.HandlerFunc(f.handleSend))
	t.Cleanup(tokenSrv.Close)
	t.Cleanup(sendSrv.Close)
	f.tokenURL = tokenSrv.URL + "/token"
	return f, tokenSrv, sendSrv
}

func (f *fake) handleToken(w http.ResponseWriter, r *http.Request) {
	n := f.tokenCalls.Add(1)
	_ = r.ParseForm()
	f.mu.Lock()
	f.assertions = append(f.assertions, r.PostForm.Get("assertion"))
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if r.Method != http.MethodPost || r.URL.Path != "/token" ||
		r.PostForm.Get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" {
		w.WriteHeader(400)
		_, _ = io.WriteString(w, `{"error":"invalid_request"}`)
		return
	}
	f.mu.Lock()
	reply := f.tokenReply
	f.mu.Unlock()
	if reply != nil {
		status, body := reply(n)
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
		return
	}
	_, _ = fmt.Fprintf(w, `{"access_token":"tok-%d","expires_in":3599,"token_type":"Bearer"}`, n)
}

func (f *fake) handleSend(w http.ResponseWriter, r *http.Request) {
	f.sendCalls.Add(1)
	cur := f.inFlight.Add(1)
	defer f.inFlight.Add(-1)
	for {
		m := f.maxFlight.Load()
		if cur <= m || f.maxFlight.CompareAndSwap(m, cur) {
			break
		}
	}
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.bodies = append(f.bodies, body)
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if r.URL.Path != "/v1/projects/"+projectID+"/messages:send" {
		w.WriteHeader(404)
		return
	}
	tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	f.mu.Lock()
	reply := f.sendReply
	f.mu.Unlock()
	if reply != nil {
		status, out := reply(tok, body)
		w.WriteHeader(status)
		_, _ = io.WriteString(w, out)
		return
	}
	var in struct {
		Message struct {
			Token string `json:"token"`
		} `json:"message"`
	}
	_ = json.Unmarshal(body, &in)
	time.Sleep(5 * time.Millisecond) // let concurrent calls overlap
	_, _ = fmt.Fprintf(w, `{"name":"projects/%s/messages/id-%s"}`, projectID, in.Message.Token)
}

func (f *fake) onToken(fn func(n int32) (int, string)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tokenReply = fn
}

func (f *fake) onSend(fn func(tok string, body []byte) (int, string)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sendReply = fn
}

func (f *fake) assertion(t *testing.T, i int) string {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	require.Greater(t, len(f.assertions), i)
	return f.assertions[i]
}

func (f *fake) body(t *testing.T, i int) []byte {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	require.Greater(t, len(f.bodies), i)
	return f.bodies[i]
}

func (f *fake) provider(t *testing.T, clk *clock, sendURL string, keyPEM string, timeout time.Duration) provider.Provider {
	t.Helper()
	p, err := fcm.Kind().New(provider.Config{
		"push_service_account_json": serviceAccountJSON(t, keyPEM, f.tokenURL),
		"base_url":                  sendURL,
	}, provider.Deps{
		HTTP: providertest.Client(timeout),
		Now:  clk.Now,
	})
	require.NoError(t, err)
	return p
}

func setup(t *testing.T) (*fake, *clock, provider.Provider) {
	t.Helper()
	f, _, sendSrv := newFake(t)
	clk := newClock()
	return f, clk, f.provider(t, clk, sendSrv.URL, pkcs8PEM(t), 2*time.Second)
}

func push(token string) provider.Message {
	return provider.Message{
		ID:      "req-" + token,
		Channel: notify.ChannelPush,
		To:      token,
		Title:   "Order shipped",
		Text:    "Your order <#42> & more is on its way",
		Data:    map[string]string{"orderId": "42", "deepLink": "app://orders/42"},
	}
}

// requireNoSecret checks an exchange against every secret of the flow.
func requireNoSecret(t *testing.T, ex provider.Exchange, f *fake) {
	t.Helper()
	f.mu.Lock()
	secrets := append([]string{"PRIVATE KEY", "tok-"}, f.assertions...)
	f.mu.Unlock()
	providertest.RequireHidden(t, ex, secrets...)
}

func TestKind(t *testing.T) {
	t.Parallel()
	providertest.RequireKind(t, fcm.Kind(), providertest.KindWant{
		ID: "push_gateway", Channel: notify.ChannelPush, Required: []string{"push_service_account_json"},
		Batch: provider.BatchDefaults{CallsPerSecond: 20, Window: 300 * time.Millisecond, MaxSize: 500},
	})
}

func TestNewInvalidConfig(t *testing.T) {
	t.Parallel()
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	ecDER, err := x509.MarshalPKCS8PrivateKey(ecKey)
	require.NoError(t, err)
	ecPEM := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: ecDER}))
	garbagePEM := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte("nope")}))

	cases := map[string]provider.Config{
		"missing key":     {},
		"not JSON":        {"push_service_account_json": "{not json"},
		"no project":      {"push_service_account_json": `{"client_email":"a@b","private_key":"x"}`},
		"no client_email": {"push_service_account_json": `{"project_id":"p","private_key":"x"}`},
		"no private_key":  {"push_service_account_json": `{"project_id":"p","client_email":"a@b"}`},
		"key not PEM":     {"push_service_account_json": serviceAccountJSON(t, "not a key", "https://oauth2.test/token")},
		"key not RSA":     {"push_service_account_json": serviceAccountJSON(t, ecPEM, "https://oauth2.test/token")},
		"key garbage":     {"push_service_account_json": serviceAccountJSON(t, garbagePEM, "https://oauth2.test/token")},
		"token_uri bad":   {"push_service_account_json": serviceAccountJSON(t, pkcs1PEM(), "file:///etc/passwd")},
		"base_url bad":    {"push_service_account_json": serviceAccountJSON(t, pkcs1PEM(), "https://oauth2.test/token"), "base_url": "nope"},
	}
	for name, cfg := range cases {
		perr := providertest.RequireInvalid(t, fcm.Kind(), cfg)
		require.NotContains(t, perr.Message, "BEGIN", name)
	}
}

// verifyAssertion checks the JWT the token endpoint received.
func verifyAssertion(t *testing.T, jwt, tokenURL string, now time.Time) {
	t.Helper()
	parts := strings.Split(jwt, ".")
	require.Len(t, parts, 3)
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	require.NoError(t, err)
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	require.NoError(t, rsa.VerifyPKCS1v15(&testKey().PublicKey, crypto.SHA256, sum[:], sig))

	var header map[string]string
	hb, err := base64.RawURLEncoding.DecodeString(parts[0])
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(hb, &header))
	require.Equal(t, map[string]string{"alg": "RS256", "typ": "JWT", "kid": keyID}, header)

	var claims map[string]any
	cb, err := base64.RawURLEncoding.DecodeString(parts[1])
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(cb, &claims))
	require.Equal(t, map[string]any{
		"iss":   clientEmail,
		"scope": "https://www.googleapis.com/auth/firebase.messaging",
		"aud":   tokenURL,
		"iat":   float64(now.Unix()),
		"exp":   float64(now.Unix() + 3600),
	}, claims)
}

func TestSendSingle(t *testing.T) {
	t.Parallel()
	f, clk, p := setup(t)
	res := p.Send(context.Background(), []provider.Message{push("device-a")})
	require.Len(t, res, 1)
	require.Nil(t, res[0].Err)
	require.Equal(t, "id-device-a", res[0].MessageID)
	require.EqualValues(t, 1, f.tokenCalls.Load())
	require.EqualValues(t, 1, f.sendCalls.Load())
	verifyAssertion(t, f.assertion(t, 0), f.tokenURL, clk.Now())
	providertest.Golden(t, "send", f.body(t, 0))
	requireNoSecret(t, res[0].Exchange, f)
}

func TestPKCS1Key(t *testing.T) {
	t.Parallel()
	f, _, sendSrv := newFake(t)
	clk := newClock()
	p := f.provider(t, clk, sendSrv.URL, pkcs1PEM(), 2*time.Second)
	res := p.Send(context.Background(), []provider.Message{push("device-a")})
	require.Nil(t, res[0].Err)
	verifyAssertion(t, f.assertion(t, 0), f.tokenURL, clk.Now())
}

func TestSendMinimalPayload(t *testing.T) {
	t.Parallel()
	f, _, p := setup(t)
	res := p.Send(context.Background(), []provider.Message{{Channel: notify.ChannelPush, To: "device-a"}})
	require.Nil(t, res[0].Err)
	providertest.Golden(t, "send_minimal", f.body(t, 0))
}

// Several messages: one call each, bounded concurrency, results in order,
// one token for all.
func TestSendBatch(t *testing.T) {
	t.Parallel()
	f, _, p := setup(t)
	msgs := make([]provider.Message, 60)
	for i := range msgs {
		msgs[i] = push(fmt.Sprintf("device-%02d", i))
	}
	res := p.Send(context.Background(), msgs)
	require.Len(t, res, len(msgs))
	for i, r := range res {
		require.Nil(t, r.Err)
		require.Equal(t, fmt.Sprintf("id-device-%02d", i), r.MessageID)
	}
	require.EqualValues(t, 1, f.tokenCalls.Load())
	require.EqualValues(t, len(msgs), f.sendCalls.Load())
	require.LessOrEqual(t, f.maxFlight.Load(), int32(16))
	require.Greater(t, f.maxFlight.Load(), int32(1))
}

func TestSendBatchPartialFailure(t *testing.T) {
	t.Parallel()
	f, _, p := setup(t)
	f.onSend(func(_ string, body []byte) (int, string) {
		if strings.Contains(string(body), "device-bad") {
			return 404, `{"error":{"code":404,"message":"Requested entity was not found.","status":"NOT_FOUND","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"UNREGISTERED"}]}}`
		}
		return 200, `{"name":"projects/demo-project/messages/ok"}`
	})
	res := p.Send(context.Background(), []provider.Message{push("device-a"), push("device-bad"), push("device-c")})
	require.Nil(t, res[0].Err)
	require.Equal(t, notify.FailureInvalidRequest, res[1].Err.Code)
	require.Contains(t, res[1].Err.Message, "UNREGISTERED")
	require.Nil(t, res[2].Err)
}

func TestTokenCaching(t *testing.T) {
	t.Parallel()
	f, clk, p := setup(t)
	for range 3 {
		res := p.Send(context.Background(), []provider.Message{push("device-a")})
		require.Nil(t, res[0].Err)
		clk.Advance(10 * time.Minute)
	}
	require.EqualValues(t, 1, f.tokenCalls.Load(), "token reused while valid")

	// 59 min in: the token (3599 s) is renewed a minute before it expires.
	clk.Advance(29 * time.Minute)
	require.Nil(t, p.Send(context.Background(), []provider.Message{push("device-a")})[0].Err)
	require.EqualValues(t, 2, f.tokenCalls.Load(), "token renewed before expiry")
	verifyAssertion(t, f.assertion(t, 1), f.tokenURL, clk.Now())
}

const unauthenticated = `{"error":{"code":401,"message":"Request had invalid authentication credentials.","status":"UNAUTHENTICATED"}}`

// A revoked token: dropped, a new one fetched, the call retried once; many
// messages refused with it cause one refresh only.
func TestUnauthenticatedRefreshOnce(t *testing.T) {
	t.Parallel()
	f, _, p := setup(t)
	f.onSend(func(tok string, _ []byte) (int, string) {
		if tok == "tok-1" {
			return 401, unauthenticated
		}
		return 200, `{"name":"projects/demo-project/messages/with-` + tok + `"}`
	})
	msgs := []provider.Message{push("a"), push("b"), push("c"), push("d")}
	res := p.Send(context.Background(), msgs)
	for _, r := range res {
		require.Nil(t, r.Err)
		require.Equal(t, "with-tok-2", r.MessageID)
	}
	require.EqualValues(t, 2, f.tokenCalls.Load())
	require.EqualValues(t, 2*len(msgs), f.sendCalls.Load())

	// The new token is cached for the next Send.
	res = p.Send(context.Background(), []provider.Message{push("e")})
	require.Nil(t, res[0].Err)
	require.EqualValues(t, 2, f.tokenCalls.Load())
}

func TestUnauthenticatedTwiceIsUnauthorized(t *testing.T) {
	t.Parallel()
	f, _, p := setup(t)
	f.onSend(func(string, []byte) (int, string) { return 401, unauthenticated })
	res := p.Send(context.Background(), []provider.Message{push("a")})
	require.NotNil(t, res[0].Err)
	require.Equal(t, notify.FailureUnauthorized, res[0].Err.Code)
	require.EqualValues(t, 2, f.tokenCalls.Load())
	require.EqualValues(t, 2, f.sendCalls.Load(), "retried exactly once")
}

// THIRD_PARTY_AUTH_ERROR is a 401 about APNs credentials: a new token
// would not help.
func TestThirdPartyAuthErrorNoRefresh(t *testing.T) {
	t.Parallel()
	f, _, p := setup(t)
	f.onSend(func(string, []byte) (int, string) {
		return 401, `{"error":{"code":401,"message":"Auth error from APNS or Web Push Service","status":"UNAUTHENTICATED","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"THIRD_PARTY_AUTH_ERROR"}]}}`
	})
	res := p.Send(context.Background(), []provider.Message{push("a")})
	require.Equal(t, notify.FailureUnauthorized, res[0].Err.Code)
	require.EqualValues(t, 1, f.tokenCalls.Load())
	require.EqualValues(t, 1, f.sendCalls.Load())
}

func TestTokenErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		status int
		body   string
		want   notify.FailureCode
	}{
		{400, `{"error":"invalid_grant","error_description":"Invalid JWT Signature."}`, notify.FailureUnauthorized},
		{401, `{"error":"invalid_client","error_description":"The OAuth client was not found."}`, notify.FailureUnauthorized},
		{400, `{"error":"unauthorized_client"}`, notify.FailureUnauthorized},
		{500, `oops`, notify.FailureTemporaryUnavailable},
		{429, `{}`, notify.FailureRateLimited},
		{400, `{"error":"invalid_request"}`, notify.FailureUnknown},
		{200, `{"token_type":"Bearer"}`, notify.FailureUnknown},
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.status, c.body), func(t *testing.T) {
			t.Parallel()
			f, _, p := setup(t)
			f.onToken(func(int32) (int, string) { return c.status, c.body })
			res := p.Send(context.Background(), []provider.Message{push("a"), push("b")})
			for _, r := range res {
				require.NotNil(t, r.Err)
				require.Equal(t, c.want, r.Err.Code)
				u, err := url.Parse(r.Exchange.URL)
				require.NoError(t, err)
				require.Equal(t, "/token", u.Path)
				require.Equal(t, map[string]string{"grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer", "assertion": "[redacted]"}, r.Exchange.Request)
				requireNoSecret(t, r.Exchange, f)
			}
			require.EqualValues(t, 0, f.sendCalls.Load())
		})
	}
}

// TestErrorMapping pins every row of the mapping table.
func TestErrorMapping(t *testing.T) {
	t.Parallel()
	envelope := func(code int, status, errorCode string) string {
		details := ""
		if errorCode != "" {
			details = `,"details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"` + errorCode + `"}]`
		}
		return fmt.Sprintf(`{"error":{"code":%d,"message":"boom","status":%q%s}}`, code, status, details)
	}
	cases := []struct {
		status    int
		rpc       string
		errorCode string
		want      notify.FailureCode
	}{
		{400, "INVALID_ARGUMENT", "INVALID_ARGUMENT", notify.FailureInvalidRequest},
		{404, "NOT_FOUND", "UNREGISTERED", notify.FailureInvalidRequest},
		{403, "PERMISSION_DENIED", "SENDER_ID_MISMATCH", notify.FailureUnauthorized},
		{429, "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED", notify.FailureRateLimited},
		{503, "UNAVAILABLE", "UNAVAILABLE", notify.FailureTemporaryUnavailable},
		{500, "INTERNAL", "INTERNAL", notify.FailureTemporaryUnavailable},
		{401, "UNAUTHENTICATED", "THIRD_PARTY_AUTH_ERROR", notify.FailureUnauthorized},
		// No FcmError detail: the rpc status, then SPEC's status rule.
		{403, "PERMISSION_DENIED", "", notify.FailureUnauthorized},
		{429, "RESOURCE_EXHAUSTED", "", notify.FailureRateLimited},
		{400, "INVALID_ARGUMENT", "", notify.FailureInvalidRequest},
		{502, "", "", notify.FailureTemporaryUnavailable},
		{404, "NOT_FOUND", "", notify.FailureUnknown},
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.status, c.rpc, c.errorCode), func(t *testing.T) {
			t.Parallel()
			f, _, p := setup(t)
			f.onSend(func(string, []byte) (int, string) { return c.status, envelope(c.status, c.rpc, c.errorCode) })
			res := p.Send(context.Background(), []provider.Message{push("a")})
			providertest.RequireFailure(t, res[0], c.want, c.status)
		})
	}
}

func TestTimeout(t *testing.T) {
	t.Parallel()
	f, _, _ := newFake(t)
	p := f.provider(t, newClock(), providertest.Hang(t), pkcs8PEM(t), 200*time.Millisecond)
	providertest.RequireTimeouts(t, p, push("a"), push("b"))
}
