package pipeline_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/notifytest"
)

// signedRaw sends body with a fixed nonce, signed by hand, so the very same
// request can be replayed.
func signedRaw(t *testing.T, b *bundle, path string, body []byte, nonce string) (int, client.Problem) {
	t.Helper()
	req, err := http.NewRequest("POST", b.key.BaseURL+path, bytes.NewReader(body))
	require.NoError(t, err)
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	req.Header.Set("X-API-Key", b.key.APIKey)
	req.Header.Set("X-Timestamp", ts)
	req.Header.Set("X-Nonce", nonce)
	req.Header.Set("X-Signature", client.Sign(b.key.HMACSecret, "POST", path, ts, nonce, body))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var p client.Problem
	_ = json.Unmarshal(raw, &p)
	return resp.StatusCode, p
}

// The nonce of an accepted send is recorded in the send's own transaction:
// a replay answers 401 Replay detected and creates nothing; a replay of a
// refused send answers 401 too.
func TestReplayOfSend(t *testing.T) {
	t.Parallel()
	b := setup(t)
	body, _ := json.Marshal(notifytest.SMS("01012345678", "once"))
	status, _ := signedRaw(t, b, "/v1/notifications", body, "nonce-accepted")
	require.Equal(t, http.StatusCreated, status)
	status, p := signedRaw(t, b, "/v1/notifications", body, "nonce-accepted")
	require.Equal(t, http.StatusUnauthorized, status)
	require.Equal(t, "Replay detected", p.Detail)

	bad, _ := json.Marshal(map[string]any{"channel": "fax"})
	status, _ = signedRaw(t, b, "/v1/notifications", bad, "nonce-refused")
	require.Equal(t, http.StatusBadRequest, status)
	status, p = signedRaw(t, b, "/v1/notifications", bad, "nonce-refused")
	require.Equal(t, http.StatusUnauthorized, status)
	require.Equal(t, "Replay detected", p.Detail)

	bulk, _ := json.Marshal(map[string]any{"items": []any{notifytest.SMS("01012345678", "bulk")}})
	status, _ = signedRaw(t, b, "/v1/notifications/bulk", bulk, "nonce-bulk")
	require.Equal(t, http.StatusCreated, status)
	status, p = signedRaw(t, b, "/v1/notifications/bulk", bulk, "nonce-bulk")
	require.Equal(t, http.StatusUnauthorized, status)
	require.Equal(t, "Replay detected", p.Detail)

	// Exactly two requests exist: the first send and the bulk item.
	r, err := b.env.Owner.Dashboard(ctx, "GET", "/v1/metrics", nil)
	require.NoError(t, err)
	var m struct {
		TotalRequests int `json:"totalRequests"`
	}
	require.NoError(t, r.Decode(&m))
	require.Equal(t, 2, m.TotalRequests)
}
