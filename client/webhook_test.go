package client_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
)

// A receiver verifies the raw body before it trusts or decodes it.
func ExampleVerifyWebhook() {
	secret := "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" // from POST /v1/webhooks
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, "read", http.StatusBadRequest)
			return
		}
		if err := client.VerifyWebhook(secret, r.Header, body, 5*time.Minute); err != nil {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		var ev client.WebhookEvent
		if err := json.Unmarshal(body, &ev); err != nil {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		fmt.Println(ev.Type, ev.Data.RequestID, ev.Data.Status)
		w.WriteHeader(http.StatusNoContent) // any 2xx ends the retries
	})

	// What notifyd sends (signed here by hand for the example).
	body := `{"type":"notification.delivered","timestamp":"2026-11-22T03:25:05.123Z","data":{"requestId":"r1","status":"sent"}}`
	req := httptest.NewRequest("POST", "/hooks/notifyd", strings.NewReader(body))
	sign(req, secret, "msg_1", time.Now(), body)
	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, req)
	fmt.Println(rec.Code)
	// Output:
	// notification.delivered r1 sent
	// 204
}

func sign(req *http.Request, secret, id string, at time.Time, body string) {
	key, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	ts := strconv.FormatInt(at.Unix(), 10)
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id + "." + ts + "." + body))
	req.Header.Set("webhook-id", id)
	req.Header.Set("webhook-timestamp", ts)
	req.Header.Set("webhook-signature", "v1,"+base64.StdEncoding.EncodeToString(m.Sum(nil)))
}

// TestVerifyWebhookAgainstStandardLibrary signs with the published
// Standard Webhooks library and verifies with ours, then the other way.
func TestVerifyWebhookAgainstStandardLibrary(t *testing.T) {
	t.Parallel()
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	body := []byte(`{"type":"notification.failed","timestamp":"2026-11-22T03:25:05.123Z","data":{}}`)
	wh, err := standardwebhooks.NewWebhook(secret)
	require.NoError(t, err)
	now := time.Now()
	sig, err := wh.Sign("msg_2", now, body)
	require.NoError(t, err)
	h := http.Header{}
	h.Set("webhook-id", "msg_2")
	h.Set("webhook-timestamp", strconv.FormatInt(now.Unix(), 10))
	h.Set("webhook-signature", sig)
	require.NoError(t, client.VerifyWebhook(secret, h, body, 0))
	require.NoError(t, wh.Verify(body, h))

	// Two signatures (a rotation): either secret verifies.
	other := "whsec_" + base64.StdEncoding.EncodeToString([]byte("another secret of 24 byte"))
	wh2, err := standardwebhooks.NewWebhook(other)
	require.NoError(t, err)
	sig2, err := wh2.Sign("msg_2", now, body)
	require.NoError(t, err)
	h.Set("webhook-signature", sig2+" "+sig)
	require.NoError(t, client.VerifyWebhook(secret, h, body, 0))
	require.NoError(t, client.VerifyWebhook(other, h, body, 0))

	// Tampering, a wrong secret, stale time and missing headers fail.
	require.ErrorIs(t, client.VerifyWebhook(secret, h, append([]byte(" "), body...), 0), client.ErrWebhookSignature)
	third := "whsec_" + base64.StdEncoding.EncodeToString([]byte("a third secret, 24 bytes"))
	require.ErrorIs(t, client.VerifyWebhook(third, h, body, 0), client.ErrWebhookSignature)
	h.Set("webhook-timestamp", strconv.FormatInt(now.Add(-10*time.Minute).Unix(), 10))
	require.ErrorIs(t, client.VerifyWebhook(secret, h, body, 0), client.ErrWebhookTimestamp)
	require.ErrorIs(t, client.VerifyWebhook(secret, http.Header{}, body, 0), client.ErrWebhookHeaders)
	require.ErrorIs(t, client.VerifyWebhook("whsec_!!", h, body, 0), client.ErrWebhookSecret)
}
