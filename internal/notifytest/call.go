package notifytest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
)

// The calls below fail the test on a transport error and leave the status
// to the caller, so a test can assert a refusal as easily as a success.

// Dash sends a Dashboard API call as c (a logged-in session); body is
// marshalled to JSON unless it is nil or []byte.
func Dash(t testing.TB, c *client.Client, method, path string, body any) *client.Response {
	t.Helper()
	r, err := c.Dashboard(context.Background(), method, path, body)
	require.NoError(t, err)
	return r
}

// Signed sends a signed Notification API call with the API key client k;
// body is marshalled to JSON unless it is nil or []byte.
func Signed(t testing.TB, k *client.Client, method, path string, body any) *client.Response {
	t.Helper()
	r, err := k.Signed(context.Background(), method, path, body)
	require.NoError(t, err)
	return r
}

// SignedWithNonce sends a signed call with a nonce of the caller's choice
// (replay checks) and answers the status; the body is discarded.
func SignedWithNonce(t testing.TB, k *client.Client, method, path string, body []byte, nonce string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), method, k.BaseURL+path, bytes.NewReader(body))
	require.NoError(t, err)
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-API-Key", k.APIKey)
	req.Header.Set("X-Timestamp", ts)
	req.Header.Set("X-Nonce", nonce)
	req.Header.Set("X-Signature", client.Sign(k.HMACSecret, method, path, ts, nonce, body))
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, res.Body)
	return res.StatusCode
}

// Decode requires status and decodes the body (a Dashboard API answer)
// into a T.
func Decode[T any](t testing.TB, r *client.Response, status int) T {
	t.Helper()
	require.Equal(t, status, r.Status, string(r.Body))
	var out T
	require.NoError(t, r.Decode(&out), string(r.Body))
	return out
}

// Data requires status and decodes the data envelope of a Notification
// API answer into a T.
func Data[T any](t testing.TB, r *client.Response, status int) T {
	t.Helper()
	require.Equal(t, status, r.Status, string(r.Body))
	return Field[T](t, r, "data")
}

// Field decodes the member name of the body's object into a T (the
// Dashboard API wraps each resource: {"template": {...}}).
func Field[T any](t testing.TB, r *client.Response, name string) T {
	t.Helper()
	var out map[string]json.RawMessage
	require.NoError(t, r.Decode(&out), string(r.Body))
	require.Contains(t, out, name, string(r.Body))
	var v T
	require.NoError(t, json.Unmarshal(out[name], &v), string(r.Body))
	return v
}

// RequireProblem requires r to be a problem+json answer of status whose
// body repeats the status and carries code (any code when code is ""),
// and answers the problem.
func RequireProblem(t testing.TB, r *client.Response, status int, code string) client.Problem {
	t.Helper()
	require.Equal(t, status, r.Status, string(r.Body))
	require.Contains(t, r.Header.Get("Content-Type"), "application/problem+json", string(r.Body))
	p := r.Problem()
	require.Equal(t, status, p.Status, string(r.Body))
	if code != "" {
		require.Equal(t, code, p.Code, string(r.Body))
	}
	return p
}
