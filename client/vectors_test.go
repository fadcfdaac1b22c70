package client

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/gate"
	"github.com/notifyd/notifyd/internal/inbox"
	"github.com/notifyd/notifyd/internal/webhooks"
)

// The golden vectors shared by this client and the SDKs (sdk/testdata/
// vectors.json): request signatures and webhook signatures, computed here
// by the Go implementation. Regenerate after changing the inputs below:
//
//	NOTIFYD_UPDATE_VECTORS=1 go test ./client -run TestGoldenVectors
const vectorsFile = "../sdk/testdata/vectors.json"

type vectors struct {
	About       string             `json:"about"`
	Signing     []signingVector    `json:"signing"`
	Webhooks    webhookVectors     `json:"webhooks"`
	InboxTokens []inboxTokenVector `json:"inboxTokens"`
}

// inboxTokenVector: a recipient token of the in-app inbox minted offline
// with the workspace's inbox secret, as the server mints it
// (internal/inbox.Sign): exp is Unix seconds.
type inboxTokenVector struct {
	Name        string `json:"name"`
	Secret      string `json:"secret"`
	WorkspaceID string `json:"workspaceId"`
	ExternalID  string `json:"externalId"`
	Exp         int64  `json:"exp"`
	Token       string `json:"token"`
}

// buildInboxTokens signs each input with the server's signer.
func buildInboxTokens() []inboxTokenVector {
	in := []inboxTokenVector{
		{Name: "plain", Secret: "nis_4f1e2d3c4b5a69788796a5b4c3d2e1f0", WorkspaceID: "01a226c4-f7a8-7f19-b96b-928f44782f30", ExternalID: "u-42", Exp: 1795000000},
		{Name: "external id with characters JSON escapes", Secret: "nis_secret", WorkspaceID: "0190f3a2-0000-7000-8000-000000000001",
			ExternalID: `a<b>&"c'~`, Exp: 1800000000},
	}
	for i := range in {
		in[i].Token = inbox.Sign(in[i].Secret, in[i].WorkspaceID, in[i].ExternalID, time.Unix(in[i].Exp, 0))
	}
	return in
}

// signingVector: the inputs of a Notification API request and the string
// to sign, body hash and headers they must give.
type signingVector struct {
	Name         string            `json:"name"`
	Method       string            `json:"method"`
	Target       string            `json:"target"` // path plus ?query, as sent
	Body         string            `json:"body"`   // UTF-8; "" is no body
	Timestamp    string            `json:"timestamp"`
	Nonce        string            `json:"nonce"`
	APIKey       string            `json:"apiKey"`
	HMACSecret   string            `json:"hmacSecret"`
	BodySHA256   string            `json:"bodySha256"`
	StringToSign string            `json:"stringToSign"`
	Headers      map[string]string `json:"headers"`
}

type webhookVectors struct {
	Sign   []webhookSignVector   `json:"sign"`
	Verify []webhookVerifyVector `json:"verify"`
}

// webhookSignVector: one delivery as notifyd signs it (the server's
// signer, internal/webhooks).
type webhookSignVector struct {
	Name      string `json:"name"`
	Secret    string `json:"secret"`
	ID        string `json:"id"`
	Timestamp int64  `json:"timestamp"`
	Body      string `json:"body"`
	Signature string `json:"signature"` // the webhook-signature header
}

// webhookVerifyVector: what a receiver is given and what it must decide.
// Error is "" when the delivery verifies, else one of "headers",
// "timestamp", "signature", "secret" (the client's ErrWebhook* errors).
type webhookVerifyVector struct {
	Name             string            `json:"name"`
	Secret           string            `json:"secret"`
	Headers          map[string]string `json:"headers"`
	Body             string            `json:"body"`
	Now              int64             `json:"now"`
	ToleranceSeconds int               `json:"toleranceSeconds"` // 0 means the default, 300
	Valid            bool              `json:"valid"`
	Error            string            `json:"error"`
}

var webhookErrorNames = map[error]string{
	ErrWebhookHeaders:   "headers",
	ErrWebhookTimestamp: "timestamp",
	ErrWebhookSignature: "signature",
	ErrWebhookSecret:    "secret",
}

func webhookErrorName(err error) string {
	for e, name := range webhookErrorNames {
		if errors.Is(err, e) {
			return name
		}
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

const (
	vecKey    = "nk_0123456789abcdef.sk_live_abcdefghijklmnopqrstuvwxyz012345"
	vecSecret = "hs_3f9a1c2b7d8e4f60a1b2c3d4e5f60718293a4b5c6d7e8f90"
	vecTS     = "1767225600" // 2026-01-01T00:00:00Z
	// Webhook secrets: whsec_ + standard base64 of 24 bytes.
	vecWhsec    = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	vecWhsecOld = "whsec_YW5vdGhlciBzZWNyZXQgb2YgMjQgYnl0ZQ=="
	vecWhTS     = int64(1767225600)
)

// signingInputs are the requests of the signing vectors.
func signingInputs() []signingVector {
	send := `{"channel":"sms","recipient":{"address":"010-1234-5678"},"content":{"text":"hi"},"idempotencyKey":"order-1042"}`
	return []signingVector{
		{Name: "send", Method: "POST", Target: "/v1/notifications", Body: send, Nonce: "3b1f0c9e2d4a6b8c0e1f2a3b4c5d6e7f"},
		{Name: "empty body (GET status)", Method: "GET", Target: "/v1/notifications/6f1c2d3e-4b5a-4c6d-8e7f-901a2b3c4d5e", Nonce: "n-1"},
		{Name: "empty body (POST cancel)", Method: "POST", Target: "/v1/notifications/6f1c2d3e-4b5a-4c6d-8e7f-901a2b3c4d5e/cancel", Nonce: "n-2"},
		{Name: "query string is signed as sent", Method: "GET", Target: "/v1/recipients?q=kim+lee&limit=2&cursor=eyJrIjoxfQ%3D%3D", Nonce: "n-3"},
		{Name: "percent-encoded path", Method: "PUT", Target: "/v1/recipients/user%2F42%20k",
			Body: `{"name":"Kim","phone":"010-1234-5678","email":"kim@example.com"}`, Nonce: "n-4"},
		{Name: "non-ASCII body is hashed as UTF-8", Method: "POST", Target: "/v1/notifications",
			Body: `{"channel":"email","recipient":{"address":"a@example.com"},"content":{"title":"안녕하세요","text":"Grüße ✓ 🚀"}}`, Nonce: "n-5"},
		{Name: "lower-case method is signed upper case", Method: "delete", Target: "/v1/recipients/u1", Nonce: "n-6"},
		{Name: "nonce of printable ASCII", Method: "POST", Target: "/v1/otp/0b6f2f1c-1c5e-4f7a-9a51-7f3f7e2c9d10/verify",
			Body: `{"code":"123456"}`, Nonce: "a~Z!0#.-_:/+=?"},
	}
}

func buildSigning() []signingVector {
	out := signingInputs()
	for i := range out {
		v := &out[i]
		v.Timestamp, v.APIKey, v.HMACSecret = vecTS, vecKey, vecSecret
		sum := sha256.Sum256([]byte(v.Body))
		v.BodySHA256 = hex.EncodeToString(sum[:])
		v.StringToSign = StringToSign(v.Method, v.Target, v.Timestamp, v.Nonce, []byte(v.Body))
		v.Headers = map[string]string{"X-API-Key": v.APIKey, "X-Timestamp": v.Timestamp, "X-Nonce": v.Nonce,
			"X-Signature": Sign(v.HMACSecret, v.Method, v.Target, v.Timestamp, v.Nonce, []byte(v.Body))}
	}
	return out
}

// fullEvent is a delivery body with every field of WebhookEvent set, so
// that the SDKs can check their event models against it.
func fullEvent(t *testing.T) string {
	s := func(v string) *string { return &v }
	step := 1
	ev := WebhookEvent{Type: "notification.delivered", Timestamp: time.Unix(vecWhTS, 123e6).UTC(), Data: WebhookEventData{
		RequestID: "6f1c2d3e-4b5a-4c6d-8e7f-901a2b3c4d5e", WorkspaceID: "0e7a4c1d-2b3f-4a5e-9c8d-7f6e5d4c3b2a", Channel: "sms",
		Status: "sent", RecipientAddress: "01012345678", SelectedProviderAccountID: s("5d4c3b2a-1f0e-4d9c-8b7a-6f5e4d3c2b1a"),
		SelectedProviderMessageID: s("vendor-msg-77"), Metadata: map[string]string{"orderId": "1042"}, DeliveredChannel: s("sms"),
		FallbackStep: &step, RecipientID: s("user-42"), Category: s("orders")}}
	b, err := json.Marshal(ev)
	require.NoError(t, err)
	return string(b)
}

func buildWebhooks(t *testing.T) webhookVectors {
	failed := `{"type":"notification.failed","timestamp":"2026-01-01T00:00:00.000Z","data":{"requestId":"r-2","workspaceId":"w-1","channel":"email","status":"failed","recipientAddress":"kim@example.com","selectedProviderAccountId":null,"selectedProviderMessageId":null,"finalErrorCode":"invalid_request","finalErrorMessage":"마지막 실패: address rejected","metadata":{},"deliveredChannel":null,"fallbackStep":null}}`
	var w webhookVectors
	for _, in := range []webhookSignVector{
		{Name: "delivered, every field", Secret: vecWhsec, ID: "msg_2Y4nN0Zr3bq1", Timestamp: vecWhTS, Body: fullEvent(t)},
		{Name: "failed, non-ASCII message", Secret: vecWhsec, ID: "msg_2Y4nN0Zr3bq2", Timestamp: vecWhTS + 5, Body: failed},
		{Name: "another secret", Secret: vecWhsecOld, ID: "msg_2Y4nN0Zr3bq3", Timestamp: vecWhTS, Body: `{"type":"notification.canceled"}`},
	} {
		sig, err := webhooks.SignWebhook(in.Secret, in.ID, in.Timestamp, []byte(in.Body))
		require.NoError(t, err)
		in.Signature = sig
		w.Sign = append(w.Sign, in)
	}
	d := w.Sign[0]
	sig := strings.TrimPrefix(d.Signature, "v1,")
	oldSig, err := webhooks.SignWebhook(vecWhsecOld, d.ID, d.Timestamp, []byte(d.Body))
	require.NoError(t, err)
	ts := strconv.FormatInt(d.Timestamp, 10)
	h := func(id, ts, sig string) map[string]string {
		return map[string]string{"webhook-id": id, "webhook-timestamp": ts, "webhook-signature": sig}
	}
	tampered := strings.Replace(d.Body, `"status":"sent"`, `"status":"sen "`, 1)
	cases := []webhookVerifyVector{
		{Name: "valid", Secret: d.Secret, Headers: h(d.ID, ts, d.Signature), Now: d.Timestamp},
		{Name: "valid with header names in any case", Secret: d.Secret,
			Headers: map[string]string{"Webhook-Id": d.ID, "WEBHOOK-TIMESTAMP": ts, "Webhook-Signature": d.Signature}, Now: d.Timestamp + 10},
		{Name: "valid during a rotation: old and new signatures", Secret: d.Secret, Headers: h(d.ID, ts, oldSig+" "+d.Signature), Now: d.Timestamp},
		{Name: "valid with the old secret during a rotation", Secret: vecWhsecOld, Headers: h(d.ID, ts, oldSig+" "+d.Signature), Now: d.Timestamp},
		{Name: "valid at the edge of the default tolerance (300 s old)", Secret: d.Secret, Headers: h(d.ID, ts, d.Signature), Now: d.Timestamp + 300},
		{Name: "valid at the edge of the default tolerance (300 s ahead)", Secret: d.Secret, Headers: h(d.ID, ts, d.Signature), Now: d.Timestamp - 300},
		{Name: "valid with a wider tolerance", Secret: d.Secret, Headers: h(d.ID, ts, d.Signature), Now: d.Timestamp + 500, ToleranceSeconds: 600},
		{Name: "valid with the bare base64 secret (no whsec_ prefix)", Secret: strings.TrimPrefix(d.Secret, "whsec_"), Headers: h(d.ID, ts, d.Signature), Now: d.Timestamp},
		{Name: "too old (301 s)", Secret: d.Secret, Headers: h(d.ID, ts, d.Signature), Now: d.Timestamp + 301},
		{Name: "too far ahead (301 s)", Secret: d.Secret, Headers: h(d.ID, ts, d.Signature), Now: d.Timestamp - 301},
		{Name: "too old for a narrower tolerance", Secret: d.Secret, Headers: h(d.ID, ts, d.Signature), Now: d.Timestamp + 61, ToleranceSeconds: 60},
		{Name: "timestamp not a number", Secret: d.Secret, Headers: h(d.ID, "2026-01-01T00:00:00Z", d.Signature), Now: d.Timestamp},
		{Name: "timestamp header changed", Secret: d.Secret, Headers: h(d.ID, strconv.FormatInt(d.Timestamp+1, 10), d.Signature), Now: d.Timestamp},
		{Name: "body tampered", Secret: d.Secret, Headers: h(d.ID, ts, d.Signature), Body: tampered, Now: d.Timestamp},
		{Name: "body re-encoded (whitespace added)", Secret: d.Secret, Headers: h(d.ID, ts, d.Signature), Body: d.Body + "\n", Now: d.Timestamp},
		{Name: "id changed", Secret: d.Secret, Headers: h("msg_other", ts, d.Signature), Now: d.Timestamp},
		{Name: "wrong secret", Secret: "whsec_" + base64.StdEncoding.EncodeToString([]byte("a third secret, 24 bytes")), Headers: h(d.ID, ts, d.Signature), Now: d.Timestamp},
		{Name: "only the old signature, verified with the new secret", Secret: d.Secret, Headers: h(d.ID, ts, oldSig), Now: d.Timestamp},
		{Name: "unknown signature version", Secret: d.Secret, Headers: h(d.ID, ts, "v2,"+sig), Now: d.Timestamp},
		{Name: "signature without padding", Secret: d.Secret, Headers: h(d.ID, ts, "v1,"+strings.TrimRight(sig, "=")), Now: d.Timestamp},
		{Name: "signature without version", Secret: d.Secret, Headers: h(d.ID, ts, sig), Now: d.Timestamp},
		{Name: "missing webhook-id", Secret: d.Secret, Headers: map[string]string{"webhook-timestamp": ts, "webhook-signature": d.Signature}, Now: d.Timestamp},
		{Name: "empty webhook-signature", Secret: d.Secret, Headers: h(d.ID, ts, ""), Now: d.Timestamp},
		{Name: "secret not base64", Secret: "whsec_not base64!", Headers: h(d.ID, ts, d.Signature), Now: d.Timestamp},
		{Name: "secret base64 without padding", Secret: "whsec_YWI", Headers: h(d.ID, ts, d.Signature), Now: d.Timestamp},
		{Name: "empty secret", Secret: "whsec_", Headers: h(d.ID, ts, d.Signature), Now: d.Timestamp},
	}
	for i := range cases {
		c := &cases[i]
		if c.Body == "" {
			c.Body = d.Body
		}
		c.Error = webhookErrorName(verifyVector(*c))
		c.Valid = c.Error == ""
	}
	w.Verify = cases
	return w
}

// verifyVector runs the client's verifier on a verify vector.
func verifyVector(c webhookVerifyVector) error {
	hd := http.Header{}
	for k, v := range c.Headers {
		hd.Set(k, v)
	}
	return verifyWebhook(c.Secret, hd, []byte(c.Body), time.Duration(c.ToleranceSeconds)*time.Second, time.Unix(c.Now, 0))
}

func buildVectors(t *testing.T) []byte {
	v := vectors{
		About: "Golden vectors shared by the Go client (client/vectors_test.go) and the SDKs in sdk/typescript and sdk/python. " +
			"Generated by the Go implementation: edit the inputs in client/vectors_test.go, then run " +
			"`NOTIFYD_UPDATE_VECTORS=1 go test ./client -run TestGoldenVectors`. " +
			"signing: X-Signature = hex(HMAC-SHA256(hmacSecret, stringToSign)), stringToSign = METHOD\\ntarget\\ntimestamp\\nnonce\\nbodySha256. " +
			"webhooks.verify: error is one of headers, timestamp, signature, secret; toleranceSeconds 0 means 300. " +
			"inboxTokens: token = head + \".\" + base64url(HMAC-SHA256(secret, head)), head = \"v1.\" + base64url(JSON {ws, sub, exp} in that order, " +
			"written as Go's encoding/json does: no spaces, <, > and & as \\u003c, \\u003e, \\u0026), base64url unpadded.",
		Signing: buildSigning(), Webhooks: buildWebhooks(t), InboxTokens: buildInboxTokens(),
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	require.NoError(t, enc.Encode(v))
	return buf.Bytes()
}

func TestGoldenVectors(t *testing.T) {
	want := buildVectors(t)
	path := filepath.FromSlash(vectorsFile)
	if os.Getenv("NOTIFYD_UPDATE_VECTORS") == "1" {
		require.NoError(t, os.WriteFile(path, want, 0o644))
	}
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, string(want), string(got),
		"%s is stale: run NOTIFYD_UPDATE_VECTORS=1 go test ./client -run TestGoldenVectors", vectorsFile)

	var v vectors
	require.NoError(t, json.Unmarshal(got, &v))
	require.NotEmpty(t, v.Signing)
	for _, s := range v.Signing {
		t.Run("signing/"+s.Name, func(t *testing.T) { checkSigningVector(t, s) })
	}
	for _, s := range v.Webhooks.Sign {
		t.Run("webhook sign/"+s.Name, func(t *testing.T) {
			sig, err := webhooks.SignWebhook(s.Secret, s.ID, s.Timestamp, []byte(s.Body))
			require.NoError(t, err)
			require.Equal(t, s.Signature, sig, "server signer")
			hd := http.Header{}
			hd.Set("webhook-id", s.ID)
			hd.Set("webhook-timestamp", strconv.FormatInt(s.Timestamp, 10))
			hd.Set("webhook-signature", s.Signature)
			require.NoError(t, verifyWebhook(s.Secret, hd, []byte(s.Body), 0, time.Unix(s.Timestamp, 0)))
		})
	}
	var valid, invalid int
	for _, c := range v.Webhooks.Verify {
		t.Run("webhook verify/"+c.Name, func(t *testing.T) {
			require.Equal(t, c.Error, webhookErrorName(verifyVector(c)))
			require.Equal(t, c.Error == "", c.Valid)
		})
		if c.Valid {
			valid++
		} else {
			invalid++
		}
	}
	require.GreaterOrEqual(t, valid, 3)
	require.GreaterOrEqual(t, invalid, 10)
	require.NotEmpty(t, v.InboxTokens)
	for _, c := range v.InboxTokens {
		t.Run("inbox token/"+c.Name, func(t *testing.T) {
			require.Equal(t, c.Token, MintInboxToken(c.Secret, c.WorkspaceID, c.ExternalID, time.Unix(c.Exp, 0)), "the Go client mints the server's token")
		})
	}
}

// checkSigningVector checks one signing vector against the client, the
// server's string to sign (internal/gate) and an HMAC computed here.
func checkSigningVector(t *testing.T, s signingVector) {
	body := []byte(s.Body)
	require.Equal(t, s.StringToSign, StringToSign(s.Method, s.Target, s.Timestamp, s.Nonce, body))
	require.Equal(t, s.StringToSign, gate.StringToSign(s.Method, s.Target, s.Timestamp, s.Nonce, body), "server's string to sign")
	sum := sha256.Sum256(body)
	require.Equal(t, s.BodySHA256, hex.EncodeToString(sum[:]))
	m := hmac.New(sha256.New, []byte(s.HMACSecret))
	m.Write([]byte(s.StringToSign))
	require.Equal(t, hex.EncodeToString(m.Sum(nil)), s.Headers["X-Signature"])
	require.Equal(t, s.Headers["X-Signature"], Sign(s.HMACSecret, s.Method, s.Target, s.Timestamp, s.Nonce, body))

	// SignHeaders signs the request target as sent, at its clock, with a
	// nonce of its own: recomputed with that nonce, the vector's inputs
	// give its signature.
	ts, err := strconv.ParseInt(s.Timestamp, 10, 64)
	require.NoError(t, err)
	c := &Client{APIKey: s.APIKey, HMACSecret: s.HMACSecret, Now: func() time.Time { return time.Unix(ts, 0) }}
	req, err := http.NewRequest(s.Method, "http://notifyd.test"+s.Target, bytes.NewReader(body))
	require.NoError(t, err)
	c.SignHeaders(req, body)
	require.Equal(t, s.APIKey, req.Header.Get("X-API-Key"))
	require.Equal(t, s.Timestamp, req.Header.Get("X-Timestamp"))
	nonce := req.Header.Get("X-Nonce")
	require.NotEmpty(t, nonce)
	require.Equal(t, Sign(s.HMACSecret, s.Method, s.Target, s.Timestamp, nonce, body), req.Header.Get("X-Signature"))
}
