package simulator

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestFCMToken(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	hdr := map[string]any{"alg": "RS256", "typ": "JWT", "kid": "key1"}
	claims := func(mod func(map[string]any)) map[string]any {
		c := e.serviceAccountClaims()
		mod(c)
		return c
	}
	now := time.Now().Unix()
	tests := []struct {
		name      string
		form      url.Values
		status    int
		errorCode string
	}{
		{"valid", url.Values{"grant_type": {fcmGrantType}, "assertion": {jwt(t, hdr, e.serviceAccountClaims())}}, 200, ""},
		{"cloud-platform scope", url.Values{"grant_type": {fcmGrantType}, "assertion": {jwt(t, hdr, claims(func(c map[string]any) {
			c["scope"] = fcmCloudScope + " " + "https://www.googleapis.com/auth/userinfo.email"
		}))}}, 200, ""},
		{"wrong grant_type", url.Values{"grant_type": {"client_credentials"}, "assertion": {jwt(t, hdr, e.serviceAccountClaims())}}, 400, "unsupported_grant_type"},
		{"no assertion", url.Values{"grant_type": {fcmGrantType}}, 400, "invalid_grant"},
		{"two parts", url.Values{"grant_type": {fcmGrantType}, "assertion": {"a.b"}}, 400, "invalid_grant"},
		{"parts not base64url", url.Values{"grant_type": {fcmGrantType}, "assertion": {"a!.b!.c!"}}, 400, "invalid_grant"},
		{"alg HS256", url.Values{"grant_type": {fcmGrantType}, "assertion": {jwt(t, map[string]any{"alg": "HS256"}, e.serviceAccountClaims())}}, 400, "invalid_grant"},
		{"no iss", url.Values{"grant_type": {fcmGrantType}, "assertion": {jwt(t, hdr, claims(func(c map[string]any) { delete(c, "iss") }))}}, 400, "invalid_grant"},
		{"wrong scope", url.Values{"grant_type": {fcmGrantType}, "assertion": {jwt(t, hdr, claims(func(c map[string]any) {
			c["scope"] = "https://www.googleapis.com/auth/devstorage.read_only"
		}))}}, 400, "invalid_grant"},
		{"aud another path", url.Values{"grant_type": {fcmGrantType}, "assertion": {jwt(t, hdr, claims(func(c map[string]any) {
			c["aud"] = "https://oauth2.googleapis.com/oauth2/v4/token"
		}))}}, 400, "invalid_grant"},
		{"lifetime over an hour", url.Values{"grant_type": {fcmGrantType}, "assertion": {jwt(t, hdr, claims(func(c map[string]any) { c["exp"] = now + 7200 }))}}, 400, "invalid_grant"},
		{"expired", url.Values{"grant_type": {fcmGrantType}, "assertion": {jwt(t, hdr, claims(func(c map[string]any) { c["iat"], c["exp"] = now-7200, now-3600 }))}}, 400, "invalid_grant"},
		{"iat in the future", url.Values{"grant_type": {fcmGrantType}, "assertion": {jwt(t, hdr, claims(func(c map[string]any) { c["iat"], c["exp"] = now+1200, now+1800 }))}}, 400, "invalid_grant"},
		{"no exp", url.Values{"grant_type": {fcmGrantType}, "assertion": {jwt(t, hdr, claims(func(c map[string]any) { delete(c, "exp") }))}}, 400, "invalid_grant"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := e.form("/token", tc.form)
			require.Equal(t, tc.status, r.status, "%s", r.body)
			m := r.obj(t)
			if tc.errorCode != "" {
				require.Equal(t, tc.errorCode, m["error"])
				require.NotEmpty(t, m["error_description"])
				return
			}
			require.EqualValues(t, 3599, m["expires_in"])
			require.Equal(t, "Bearer", m["token_type"])
			require.True(t, strings.HasPrefix(m["access_token"].(string), "ya29."))
		})
	}
	t.Run("JSON body is refused", func(t *testing.T) {
		t.Parallel()
		r := e.postJSON("/token", nil, map[string]string{"grant_type": fcmGrantType})
		require.Equal(t, http.StatusBadRequest, r.status)
		require.Equal(t, "invalid_request", r.obj(t)["error"])
	})
}

func TestFCMSend(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	auth := map[string]string{"Authorization": "Bearer " + e.fcmAccessToken()}
	tests := []struct {
		name   string
		body   string
		status int
		to     string
	}{
		{"token with notification and data", `{"validate_only":false,"message":{"token":"dev-tok-1","notification":{"title":"T","body":"B"},"data":{"nid":"n1"},"android":{"priority":"high"},"apns":{"headers":{"apns-priority":"10"}}}}`, 200, "dev-tok-1"},
		{"topic", `{"message":{"topic":"news","data":{"k":"v"}}}`, 200, "news"},
		{"condition", `{"message":{"condition":"'a' in topics && 'b' in topics","notification":{"title":"x"}}}`, 200, "'a' in topics && 'b' in topics"},
		{"no target", `{"message":{"notification":{"title":"x"}}}`, 400, ""},
		{"two targets", `{"message":{"token":"a","topic":"b"}}`, 400, ""},
		{"data value not a string", `{"message":{"token":"a","data":{"n":1}}}`, 400, ""},
		{"unknown message field", `{"message":{"token":"a","priority":"high"}}`, 400, ""},
		{"unknown top-level field", `{"message":{"token":"a"},"dry_run":true}`, 400, ""},
		{"unknown notification field", `{"message":{"token":"a","notification":{"title":"x","sound":"default"}}}`, 400, ""},
		{"no message", `{"validate_only":false}`, 400, ""},
		{"too big", `{"message":{"token":"a","data":{"k":"` + strings.Repeat("x", 4100) + `"}}}`, 400, ""},
		{"not JSON", `{`, 400, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := e.postJSON("/v1/projects/my-proj/messages:send", auth, []byte(tc.body))
			require.Equal(t, tc.status, r.status, "%s", r.body)
			m := r.obj(t)
			if tc.status != 200 {
				er := m["error"].(map[string]any)
				require.EqualValues(t, 400, er["code"])
				require.Equal(t, "INVALID_ARGUMENT", er["status"])
				require.NotEmpty(t, er["message"])
				return
			}
			name := m["name"].(string)
			require.True(t, strings.HasPrefix(name, "projects/my-proj/messages/"), name)
			ms := e.messages(kindPush, tc.to)
			require.Len(t, ms, 1)
			require.Equal(t, name, ms[0].ID)
			if tc.name == "token with notification and data" {
				require.Equal(t, "T", ms[0].Subject)
				require.Equal(t, "B", ms[0].Text)
				require.Equal(t, map[string]string{"nid": "n1"}, ms[0].Headers)
			}
		})
	}
	t.Run("validate_only records nothing", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		r := e.postJSON("/v1/projects/p/messages:send", map[string]string{"Authorization": "Bearer " + e.fcmAccessToken()},
			[]byte(`{"validate_only":true,"message":{"token":"x"}}`))
		require.Equal(t, "projects/p/messages/fake_message_id", r.obj(t)["name"])
		require.Empty(t, e.messages("", ""))
	})
}

func TestFCMSendAuth(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	other := newEnv(t)
	now := time.Now()
	expired := e.sim.signedToken(fcmTokenPrefix, now.Add(-time.Second))
	tests := []struct {
		name string
		hdr  map[string]string
	}{
		{"no header", nil},
		{"not bearer", map[string]string{"Authorization": "Basic abc"}},
		{"arbitrary token", map[string]string{"Authorization": "Bearer ya29.a0AfH6SM"}},
		{"another simulator's token", map[string]string{"Authorization": "Bearer " + other.fcmAccessToken()}},
		{"expired token", map[string]string{"Authorization": "Bearer " + expired}},
		{"tampered token", map[string]string{"Authorization": "Bearer " + tamper(e.fcmAccessToken())}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := e.postJSON("/v1/projects/p/messages:send", tc.hdr, []byte(`{"message":{"token":"x"}}`))
			require.Equal(t, http.StatusUnauthorized, r.status)
			er := r.obj(t)["error"].(map[string]any)
			require.EqualValues(t, 401, er["code"])
			require.Equal(t, "UNAUTHENTICATED", er["status"])
			require.NotEmpty(t, r.header.Get("WWW-Authenticate"))
		})
	}
}

// tamper changes the expiry of a token without re-signing it.
func tamper(tok string) string {
	i := len(fcmTokenPrefix)
	b := []byte(tok)
	if b[i+15] == 'f' {
		b[i+15] = 'e'
	} else {
		b[i+15] = 'f'
	}
	return string(b)
}

func TestFCMFaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		fault   map[string]any
		status  int
		rpc     string
		fcmCode string
	}{
		{"UNREGISTERED", map[string]any{"kind": "push_gateway", "vendorCode": "UNREGISTERED"}, 404, "NOT_FOUND", "UNREGISTERED"},
		{"INVALID_ARGUMENT", map[string]any{"kind": "push_gateway", "vendorCode": "INVALID_ARGUMENT"}, 400, "INVALID_ARGUMENT", "INVALID_ARGUMENT"},
		{"SENDER_ID_MISMATCH", map[string]any{"kind": "push_gateway", "vendorCode": "SENDER_ID_MISMATCH"}, 403, "PERMISSION_DENIED", "SENDER_ID_MISMATCH"},
		{"THIRD_PARTY_AUTH_ERROR", map[string]any{"kind": "push_gateway", "vendorCode": "THIRD_PARTY_AUTH_ERROR"}, 401, "UNAUTHENTICATED", "THIRD_PARTY_AUTH_ERROR"},
		{"status 429 is QUOTA_EXCEEDED", map[string]any{"kind": "push_gateway", "status": 429}, 429, "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED"},
		{"status 500 is INTERNAL", map[string]any{"kind": "push_gateway", "status": 500}, 500, "INTERNAL", "INTERNAL"},
		{"status 503 is UNAVAILABLE", map[string]any{"kind": "push_gateway", "status": 503}, 503, "UNAVAILABLE", "UNAVAILABLE"},
		{"status 401 is a token error", map[string]any{"kind": "push_gateway", "status": 401}, 401, "UNAUTHENTICATED", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			auth := map[string]string{"Authorization": "Bearer " + e.fcmAccessToken()}
			e.fault(tc.fault)
			r := e.postJSON("/v1/projects/p/messages:send", auth, []byte(`{"message":{"token":"x"}}`))
			require.Equal(t, tc.status, r.status, "%s", r.body)
			er := r.obj(t)["error"].(map[string]any)
			require.EqualValues(t, tc.status, er["code"])
			require.Equal(t, tc.rpc, er["status"])
			if tc.fcmCode == "" {
				require.NotContains(t, er, "details")
			} else {
				d := er["details"].([]any)[0].(map[string]any)
				require.Equal(t, "type.googleapis.com/google.firebase.fcm.v1.FcmError", d["@type"])
				require.Equal(t, tc.fcmCode, d["errorCode"])
			}
			if tc.status == 429 {
				require.Equal(t, "1", r.header.Get("Retry-After"))
				require.Len(t, er["details"], 2)
			}
			require.Empty(t, e.messages("", ""))
			r = e.postJSON("/v1/projects/p/messages:send", auth, []byte(`{"message":{"token":"x"}}`))
			require.Equal(t, http.StatusOK, r.status)
		})
	}
	t.Run("token op", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.fault(map[string]any{"kind": "push_gateway", "op": "token", "status": 400})
		a := jwt(t, map[string]any{"alg": "RS256"}, e.serviceAccountClaims())
		r := e.form("/token", url.Values{"grant_type": {fcmGrantType}, "assertion": {a}})
		require.Equal(t, http.StatusBadRequest, r.status)
		require.Equal(t, "invalid_grant", r.obj(t)["error"])
		require.NotEmpty(t, e.fcmAccessToken())
	})
}

func TestJWTPadding(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := jwt(t, map[string]any{"alg": "RS256"}, e.serviceAccountClaims())
	parts := strings.Split(a, ".")
	// RFC 7515 forbids padding; a padded part is a client bug.
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	require.NoError(t, err)
	parts[1] = base64.URLEncoding.EncodeToString(raw)
	if !strings.HasSuffix(parts[1], "=") {
		parts[1] += "=="
	}
	r := e.form("/token", url.Values{"grant_type": {fcmGrantType}, "assertion": {strings.Join(parts, ".")}})
	require.Equal(t, http.StatusBadRequest, r.status, "%s", r.body)
	require.Equal(t, "invalid_grant", r.obj(t)["error"])
}
