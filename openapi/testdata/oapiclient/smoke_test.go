package oapiclient

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"
)

// TestGeneratedClient drives a running notifyd (NOTIFYD_SMOKE_URL) with
// the client generated from its document: each answer must have the
// documented status and decode into the documented type.
func TestGeneratedClient(t *testing.T) {
	base := os.Getenv("NOTIFYD_SMOKE_URL")
	if base == "" {
		t.Skip("NOTIFYD_SMOKE_URL is not set (run by openapi/openapi_test.go)")
	}
	ctx := context.Background()
	c, err := NewClientWithResponses(base)
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, status int, err error, want int, typed bool, body []byte) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: the answer does not decode as documented: %v\n%s", what, err, body)
		}
		if status != want || !typed {
			t.Fatalf("%s: status %d (want %d), typed body %v\n%s", what, status, want, typed, body)
		}
	}

	login, err := c.LoginWithResponse(ctx, LoginJSONRequestBody{Email: os.Getenv("NOTIFYD_SMOKE_EMAIL"), Password: os.Getenv("NOTIFYD_SMOKE_PASSWORD")})
	check("login", login.StatusCode(), err, 200, err == nil && login.JSON200 != nil, login.Body)
	bearer := func(_ context.Context, r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+login.JSON200.AccessToken)
		return nil
	}

	var key *CreateApiKeyResponse
	for _, name := range []string{"first", "second", "third"} { // three audit entries to page through
		key, err = c.CreateApiKeyWithResponse(ctx, CreateApiKeyJSONRequestBody{Name: name, Scopes: []Scope{"notifications:send", "notifications:read"}}, bearer)
		check("create API key", key.StatusCode(), err, 201, err == nil && key.JSON201 != nil, key.Body)
	}

	limit := 1
	params := &ListAuditLogsParams{Limit: &limit}
	for page := 0; page < 2; page++ {
		logs, err := c.ListAuditLogsWithResponse(ctx, params, bearer)
		check("audit log page", logs.StatusCode(), err, 200, err == nil && logs.JSON200 != nil && len(logs.JSON200.Logs) == 1, logs.Body)
		if !logs.JSON200.HasNext || logs.JSON200.Cursor == nil {
			t.Fatalf("audit log page %d: no next page\n%s", page, logs.Body)
		}
		cur := Cursor(*logs.JSON200.Cursor)
		params.Cursor = &cur
	}

	sign := func(method, target string, body []byte) (ts, nonce, sig string) {
		ts = strconv.FormatInt(time.Now().Unix(), 10)
		b := make([]byte, 12)
		_, _ = rand.Read(b)
		nonce = hex.EncodeToString(b)
		sum := sha256.Sum256(body)
		mac := hmac.New(sha256.New, []byte(key.JSON201.HmacSecret))
		mac.Write([]byte(method + "\n" + target + "\n" + ts + "\n" + nonce + "\n" + hex.EncodeToString(sum[:])))
		return ts, nonce, hex.EncodeToString(mac.Sum(nil))
	}
	apiKey := func(_ context.Context, r *http.Request) error {
		r.Header.Set("X-API-Key", key.JSON201.Key)
		return nil
	}

	body, _ := json.Marshal(map[string]any{"channel": "email", "recipient": map[string]any{"address": "someone@example.com"},
		"content": map[string]any{"title": "Hello", "text": "From a generated client"}, "metadata": map[string]string{"order": "42"}})
	ts, nonce, sig := sign("POST", "/v1/notifications", body)
	sent, err := c.SendNotificationWithBodyWithResponse(ctx, &SendNotificationParams{XTimestamp: XTimestamp(ts), XNonce: XNonce(nonce), XSignature: XSignature(sig)},
		"application/json", bytes.NewReader(body), apiKey)
	check("send", sent.StatusCode(), err, 201, err == nil && sent.JSON201 != nil, sent.Body)

	id := sent.JSON201.Data.RequestId
	ts, nonce, sig = sign("GET", "/v1/notifications/"+id.String(), nil)
	got, err := c.GetNotificationWithResponse(ctx, id, &GetNotificationParams{XTimestamp: XTimestamp(ts), XNonce: XNonce(nonce), XSignature: XSignature(sig)}, apiKey)
	check("status lookup", got.StatusCode(), err, 200, err == nil && got.JSON200 != nil, got.Body)

	attempts, err := c.ListAttemptsWithResponse(ctx, &ListAttemptsParams{}, bearer)
	check("attempt history", attempts.StatusCode(), err, 200, err == nil && attempts.JSON200 != nil, attempts.Body)
}
