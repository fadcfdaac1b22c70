package gate_test

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/accounts"
	"github.com/notifyd/notifyd/internal/gate"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/notifytest"
	"github.com/notifyd/notifyd/internal/secret"
	"github.com/notifyd/notifyd/internal/usecase"
)

// epoch is the fixed clock of these tests.
var epoch = time.Unix(1_800_000_000, 0).UTC()

// sigEnv is a gate on a real store with one workspace and one API key,
// made by the accounts room.
type sigEnv struct {
	svc    *accounts.Service
	gate   *gate.Gate
	actor  *usecase.Actor
	key    *accounts.NewAPIKey
	offset atomic.Int64 // seconds added to epoch
}

func (e *sigEnv) now() time.Time { return epoch.Add(time.Duration(e.offset.Load()) * time.Second) }

func newSigEnv(t testing.TB, url string) *sigEnv {
	t.Helper()
	db := notifytest.OpenDB(t, url)
	box, err := secret.NewBox(bytes.Repeat([]byte{7}, secret.KeySize))
	require.NoError(t, err)
	e := &sigEnv{}
	e.gate = gate.New(gate.Options{Store: db, Box: box, Now: e.now})
	e.svc = accounts.New(accounts.Options{Store: db, Box: box, Now: e.now, Keys: e.gate})
	ctx := context.Background()
	res, err := e.svc.Bootstrap(ctx, "W", "owner@example.com", "owner password")
	require.NoError(t, err)
	e.actor = &usecase.Actor{UserID: res.UserID, WorkspaceID: res.WorkspaceID, Role: notify.RoleOwner}
	e.key = e.newKey(t, notify.ScopeNotificationsSend)
	return e
}

func (e *sigEnv) newKey(t testing.TB, scopes ...string) *accounts.NewAPIKey {
	t.Helper()
	name := "k"
	k, err := e.svc.CreateAPIKey(context.Background(), e.actor, accounts.APIKeyInput{Name: &name, Scopes: &scopes})
	require.NoError(t, err)
	return k
}

// req is a request signed with hmacSecret at the env's clock plus skew.
func (e *sigEnv) req(token, hmacSecret, method, target string, body []byte, skew int64, nonce string) gate.SignedRequest {
	ts := strconv.FormatInt(e.now().Unix()+skew, 10)
	return gate.SignedRequest{APIKey: token, Timestamp: ts, Nonce: nonce, Method: method, Target: target, Body: body,
		Signature: client.Sign(hmacSecret, method, target, ts, nonce, body)}
}

func requireUnauthorized(t testing.TB, detail string, k *notify.APIKey, err error) {
	t.Helper()
	require.Nil(t, k)
	ne, ok := notify.AsError(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, notify.CodeUnauthorized, ne.Code)
	require.Equal(t, 401, ne.Status())
	require.Equal(t, detail, ne.Detail)
}

func TestVerifySignature(t *testing.T) {
	t.Parallel()
	e := newSigEnv(t, notifytest.DatabaseURL(t))
	ctx := context.Background()
	tok, hs := e.key.Token, e.key.HMACSecret
	body := []byte(`{"channel":"sms"}`)
	verify := func(r gate.SignedRequest) (*notify.APIKey, error) { return e.gate.VerifySignature(ctx, r) }

	// The right signature passes and touches lastUsedAt.
	k, err := verify(e.req(tok, hs, "POST", "/v1/notifications", body, 0, client.NewNonce()))
	require.NoError(t, err)
	require.Equal(t, e.key.Key.ID, k.ID)
	require.Equal(t, e.actor.WorkspaceID, k.WorkspaceID)
	keys, err := e.svc.ListAPIKeys(ctx, e.actor)
	require.NoError(t, err)
	require.NotNil(t, keys[0].LastUsedAt)
	require.Equal(t, epoch, *keys[0].LastUsedAt)

	t.Run("key", func(t *testing.T) {
		keyID, _, _ := strings.Cut(tok, ".")
		for _, bad := range []string{keyID + ".wrong-secret", keyID + "." + strings.Repeat("A", 43), "nk_000000000000000000000000.secret",
			"", "nodot", keyID, keyID + ".", "." + tok, tok + "x", strings.Repeat("a", 300) + "." + "b", "nk_\xff\xfe.x", "nk_\x00.x"} {
			k, err := verify(e.req(bad, hs, "POST", "/v1/notifications", body, 0, client.NewNonce()))
			requireUnauthorized(t, "Invalid API key", k, err)
		}
	})

	t.Run("timestamp", func(t *testing.T) {
		for _, skew := range []int64{-301, 301, -100000, 100000} {
			k, err := verify(e.req(tok, hs, "POST", "/v1/notifications", body, skew, client.NewNonce()))
			requireUnauthorized(t, "Timestamp outside tolerance", k, err)
		}
		for _, skew := range []int64{-300, 300, -1, 1} {
			_, err := verify(e.req(tok, hs, "POST", "/v1/notifications", body, skew, client.NewNonce()))
			require.NoError(t, err, "skew %d", skew)
		}
		for _, ts := range []string{"", "abc", "1.8e9", "99999999999999999999", "-9223372036854775808", "9223372036854775807", " 1800000000"} {
			r := e.req(tok, hs, "POST", "/v1/notifications", body, 0, client.NewNonce())
			r.Timestamp = ts
			r.Signature = client.Sign(hs, r.Method, r.Target, ts, r.Nonce, body)
			k, err := verify(r)
			requireUnauthorized(t, "Timestamp outside tolerance", k, err)
		}
	})

	t.Run("nonce", func(t *testing.T) {
		n := client.NewNonce()
		_, err := verify(e.req(tok, hs, "POST", "/v1/notifications", body, 0, n))
		require.NoError(t, err)
		// Replayed, even with another timestamp, body or target (all signed anew).
		k, err := verify(e.req(tok, hs, "POST", "/v1/notifications", body, 0, n))
		requireUnauthorized(t, "Replay detected", k, err)
		k, err = verify(e.req(tok, hs, "GET", "/v1/notifications/x", nil, 5, n))
		requireUnauthorized(t, "Replay detected", k, err)
		// Nonces are per key.
		other := e.newKey(t, notify.ScopeOTPSend)
		_, err = verify(e.req(other.Token, other.HMACSecret, "POST", "/v1/otp/send", body, 0, n))
		require.NoError(t, err)
		// A badly signed request does not burn a nonce.
		n2 := client.NewNonce()
		bad := e.req(tok, hs, "POST", "/v1/notifications", body, 0, n2)
		bad.Signature = strings.Repeat("0", 64)
		k, err = verify(bad)
		requireUnauthorized(t, "Invalid signature", k, err)
		_, err = verify(e.req(tok, hs, "POST", "/v1/notifications", body, 0, n2))
		require.NoError(t, err)
		// Malformed nonces.
		for _, bad := range []string{"", strings.Repeat("n", 129), "has space", "tab\t", "ünï", "nul\x00"} {
			k, err := verify(e.req(tok, hs, "POST", "/v1/notifications", body, 0, bad))
			requireUnauthorized(t, "Invalid nonce", k, err)
		}
		_, err = verify(e.req(tok, hs, "POST", "/v1/notifications", body, 0, strings.Repeat("~", 128)))
		require.NoError(t, err)
	})

	t.Run("signature", func(t *testing.T) {
		good := e.req(tok, hs, "POST", "/v1/notifications?a=1", body, 0, client.NewNonce())
		tamper := map[string]func(r *gate.SignedRequest){
			"body":          func(r *gate.SignedRequest) { r.Body = append([]byte{}, `{"channel":"email"}`...) },
			"body appended": func(r *gate.SignedRequest) { r.Body = append(append([]byte{}, body...), ' ') },
			"empty body":    func(r *gate.SignedRequest) { r.Body = nil },
			"query dropped": func(r *gate.SignedRequest) { r.Target = "/v1/notifications" },
			"query changed": func(r *gate.SignedRequest) { r.Target = "/v1/notifications?a=2" },
			"query added":   func(r *gate.SignedRequest) { r.Target += "&b=1" },
			"path":          func(r *gate.SignedRequest) { r.Target = "/v1/notifications/bulk?a=1" },
			"method":        func(r *gate.SignedRequest) { r.Method = "PUT" },
			"timestamp":     func(r *gate.SignedRequest) { r.Timestamp = strconv.FormatInt(epoch.Unix()+1, 10) },
			"nonce":         func(r *gate.SignedRequest) { r.Nonce += "x" },
			"random hex":    func(r *gate.SignedRequest) { r.Signature = strings.Repeat("ab", 32) },
			"not hex":       func(r *gate.SignedRequest) { r.Signature = "zz" + r.Signature[2:] },
			"truncated":     func(r *gate.SignedRequest) { r.Signature = r.Signature[:62] },
			"empty":         func(r *gate.SignedRequest) { r.Signature = "" },
			"other secret":  func(r *gate.SignedRequest) { *r = e.req(tok, "wrong", r.Method, r.Target, r.Body, 0, r.Nonce) },
			"key secret": func(r *gate.SignedRequest) {
				*r = e.req(tok, strings.SplitN(tok, ".", 2)[1], r.Method, r.Target, r.Body, 0, r.Nonce)
			},
			"sha256 not hex": func(r *gate.SignedRequest) { r.Signature += "00" },
		}
		for name, f := range tamper {
			r := good
			f(&r)
			k, err := verify(r)
			requireUnauthorized(t, "Invalid signature", k, err)
			_ = name
		}
		// Upper-case hex is the same signature; the untouched request passes.
		r := good
		r.Signature = strings.ToUpper(r.Signature)
		_, err := verify(r)
		require.NoError(t, err)
		k, err := verify(good)
		requireUnauthorized(t, "Replay detected", k, err)
		// The empty body hashes as the empty string.
		_, err = verify(e.req(tok, hs, "GET", "/v1/notifications/abc?x=%20y", nil, 0, client.NewNonce()))
		require.NoError(t, err)
		_, err = verify(e.req(tok, hs, "get", "/v1/notifications/abc", []byte{}, 0, client.NewNonce()))
		require.NoError(t, err)
	})

	t.Run("status and rotation", func(t *testing.T) {
		k := e.newKey(t, notify.ScopeNotificationsRead)
		ok := func() error {
			_, err := verify(e.req(k.Token, k.HMACSecret, "GET", "/v1/notifications/x", nil, 0, client.NewNonce()))
			return err
		}
		require.NoError(t, ok())
		_, err := e.svc.SetAPIKeyStatus(ctx, e.actor, k.Key.ID, "suspend")
		require.NoError(t, err)
		requireUnauthorized(t, "Invalid API key", nil, ok())
		_, err = e.svc.SetAPIKeyStatus(ctx, e.actor, k.Key.ID, "resume")
		require.NoError(t, err)
		require.NoError(t, ok())

		rot, err := e.svc.RotateAPIKey(ctx, e.actor, k.Key.ID)
		require.NoError(t, err)
		requireUnauthorized(t, "Invalid API key", nil, ok())
		kk, err := verify(e.req(rot.Token, k.HMACSecret, "GET", "/x", nil, 0, client.NewNonce()))
		requireUnauthorized(t, "Invalid signature", kk, err)
		_, err = verify(e.req(rot.Token, rot.HMACSecret, "GET", "/x", nil, 0, client.NewNonce()))
		require.NoError(t, err)

		_, err = e.svc.SetAPIKeyStatus(ctx, e.actor, k.Key.ID, "revoke")
		require.NoError(t, err)
		kk, err = verify(e.req(rot.Token, rot.HMACSecret, "GET", "/x", nil, 0, client.NewNonce()))
		requireUnauthorized(t, "Invalid API key", kk, err)
		_, err = e.svc.SetAPIKeyStatus(ctx, e.actor, k.Key.ID, "resume")
		require.Error(t, err)
	})

	t.Run("scope", func(t *testing.T) {
		k, err := verify(e.req(tok, hs, "POST", "/v1/notifications", body, 0, client.NewNonce()))
		require.NoError(t, err)
		require.NoError(t, gate.RequireScope(k, notify.ScopeNotificationsSend))
		for _, scope := range []string{notify.ScopeNotificationsRead, notify.ScopeOTPSend, notify.ScopeOTPVerify} {
			err := gate.RequireScope(k, scope)
			ne, ok := notify.AsError(err)
			require.True(t, ok)
			require.Equal(t, notify.CodeForbidden, ne.Code)
			require.Equal(t, 403, ne.Status())
			require.Equal(t, "API key missing required scope: "+scope, ne.Detail)
		}
	})
}

// TestNonceExpiry: a nonce is remembered for twice the tolerance, then
// may be used again (with a fresh timestamp).
func TestNonceExpiry(t *testing.T) {
	t.Parallel()
	e := newSigEnv(t, notifytest.DatabaseURL(t))
	ctx := context.Background()
	n := client.NewNonce()
	_, err := e.gate.VerifySignature(ctx, e.req(e.key.Token, e.key.HMACSecret, "GET", "/x", nil, 0, n))
	require.NoError(t, err)
	e.offset.Store(599)
	k, err := e.gate.VerifySignature(ctx, e.req(e.key.Token, e.key.HMACSecret, "GET", "/x", nil, 0, n))
	requireUnauthorized(t, "Replay detected", k, err)
	e.offset.Store(601)
	_, err = e.gate.VerifySignature(ctx, e.req(e.key.Token, e.key.HMACSecret, "GET", "/x", nil, 0, n))
	require.NoError(t, err)
}

func validNonce(n string) bool {
	if len(n) < 1 || len(n) > 128 {
		return false
	}
	for i := 0; i < len(n); i++ {
		if n[i] < 0x21 || n[i] > 0x7e {
			return false
		}
	}
	return true
}

// FuzzVerifySignature throws random headers and bodies at the signature
// check on a real SQLite store. It never panics, fails only with 401
// SVC-40100, never authenticates a request that is not correctly signed
// with the right key, and always authenticates one that is (fresh nonce,
// timestamp within tolerance).
//
// mode selects what the harness does with the inputs: 0 sends them as
// they are; 1 sends them with the right key and a correct signature at
// skew seconds from the clock; 2 does the same and then tampers with one
// signed part; 3 signs correctly but sends the fuzzed key string.
func FuzzVerifySignature(f *testing.F) {
	e := newSigEnv(f, notifytest.SQLiteURL(f))
	tok, hs := e.key.Token, e.key.HMACSecret
	ts := strconv.FormatInt(epoch.Unix(), 10)
	good := client.Sign(hs, "POST", "/v1/notifications", ts, "seed-nonce", []byte(`{}`))
	f.Add(tok, ts, "seed-nonce", good, "POST", "/v1/notifications", []byte(`{}`), int16(0), uint8(0))
	f.Add(tok, ts, "seed-nonce", good, "POST", "/v1/notifications", []byte(`{}`), int16(0), uint8(0)) // replay
	f.Add(tok, ts, "n1", good, "POST", "/v1/notifications", []byte(`{}`), int16(0), uint8(0))
	f.Add("nk_x.y", "0", "n", "00", "GET", "/", []byte(nil), int16(0), uint8(0))
	f.Add("", "", "", "", "", "", []byte(nil), int16(0), uint8(0))
	f.Add(tok, ts, "n2", "", "GET", "/v1/notifications/1?x=y", []byte(nil), int16(12), uint8(1))
	f.Add(tok, ts, "n3", "", "POST", "/v1/notifications", []byte(`{"a":1}`), int16(-300), uint8(1))
	f.Add(tok, ts, "n4", "", "POST", "/v1/notifications", []byte(`{"a":1}`), int16(301), uint8(1))
	f.Add(tok, ts, "bad nonce", "", "POST", "/v1/notifications", []byte(`{"a":1}`), int16(0), uint8(1))
	f.Add(tok, ts, "n5", "", "PUT", "/v1/x?y", []byte(`body`), int16(0), uint8(2))
	f.Add(tok+"x", ts, "n6", "", "POST", "/v1/notifications", []byte(`{}`), int16(0), uint8(3))
	f.Add(strings.SplitN(tok, ".", 2)[0]+".guess", ts, "n7", "", "POST", "/v1/notifications", []byte(`{}`), int16(0), uint8(3))

	var mu sync.Mutex
	used := map[string]bool{} // nonces accepted so far (this process's store)
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, apiKey, timestamp, nonce, signature, method, target string, body []byte, skew int16, mode uint8) {
		r := gate.SignedRequest{APIKey: apiKey, Timestamp: timestamp, Nonce: nonce, Signature: signature, Method: method, Target: target, Body: body}
		wantOK := false
		switch mode % 4 {
		case 1, 2, 3:
			r.APIKey = tok
			if mode%4 == 3 {
				r.APIKey = apiKey
			}
			r.Timestamp = strconv.FormatInt(epoch.Unix()+int64(skew), 10)
			r.Signature = client.Sign(hs, method, target, r.Timestamp, nonce, body)
			mu.Lock()
			wantOK = r.APIKey == tok && skew >= -300 && skew <= 300 && validNonce(nonce) && !used[nonce]
			mu.Unlock()
			if mode%4 == 2 {
				wantOK = false
				switch len(body) % 4 {
				case 0:
					r.Body = append(append([]byte{}, body...), 'x')
				case 1:
					r.Target += "?"
				case 2:
					r.Method += "X"
				case 3:
					r.Signature = strings.Repeat("0", 64)
				}
			}
		}
		k, err := e.gate.VerifySignature(ctx, r)
		if err != nil {
			ne, ok := notify.AsError(err)
			if !ok || ne.Code != notify.CodeUnauthorized {
				t.Fatalf("error %v is not a 401 SVC-40100", err)
			}
			if wantOK {
				t.Fatalf("a correctly signed request was refused: %v", err)
			}
			return
		}
		// Authenticated: it must be the right key, a right signature, a fresh valid nonce.
		require.NotNil(t, k)
		require.Equal(t, e.key.Key.ID, k.ID)
		require.Equal(t, tok, r.APIKey)
		require.Equal(t, strings.ToLower(client.Sign(hs, r.Method, r.Target, r.Timestamp, r.Nonce, r.Body)), strings.ToLower(r.Signature))
		sec, perr := strconv.ParseInt(r.Timestamp, 10, 64)
		require.NoError(t, perr)
		require.LessOrEqual(t, abs(sec-epoch.Unix()), int64(300))
		require.True(t, validNonce(r.Nonce))
		mu.Lock()
		defer mu.Unlock()
		require.False(t, used[r.Nonce], "nonce %q accepted twice", r.Nonce)
		used[r.Nonce] = true
		if mode%4 == 2 {
			t.Fatalf("a tampered request was accepted")
		}
	})
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}
