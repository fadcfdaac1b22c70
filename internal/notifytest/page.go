package notifytest

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
)

// Page is the answer of a public (unauthenticated) request.
type Page struct {
	Status int
	Header http.Header
	Body   string
}

// Public sends an unauthenticated request to the daemon at base (its URL)
// and reads the whole answer.
func Public(t testing.TB, base, method, path, contentType string, body []byte) Page {
	t.Helper()
	req, err := http.NewRequest(method, base+path, bytes.NewReader(body))
	require.NoError(t, err)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return Page{Status: resp.StatusCode, Header: resp.Header, Body: string(b)}
}

// RequireHTMLPage checks the status and the headers every public HTML
// page carries: never cached, no referrer, a restrictive CSP, no script.
func RequireHTMLPage(t testing.TB, p Page, status int) {
	t.Helper()
	require.Equal(t, status, p.Status, p.Body)
	require.Equal(t, "text/html; charset=utf-8", p.Header.Get("Content-Type"))
	require.Equal(t, "no-store", p.Header.Get("Cache-Control"))
	require.Equal(t, "no-referrer", p.Header.Get("Referrer-Policy"))
	require.Contains(t, p.Header.Get("Content-Security-Policy"), "default-src 'none'")
	require.Contains(t, p.Body, `<html lang="en">`)
	require.NotContains(t, p.Body, "<script")
}

// DashboardCall sends a dashboard request as c and requires the status;
// an error status must come as problem+json with a detail. A string body
// is sent raw.
func DashboardCall(t testing.TB, c *client.Client, method, path string, body any, status int) *client.Response {
	t.Helper()
	if s, ok := body.(string); ok {
		body = []byte(s)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r, err := c.Dashboard(ctx, method, path, body)
	require.NoError(t, err)
	require.Equal(t, status, r.Status, "%s %s: %s", method, path, string(r.Body))
	if status >= 400 {
		require.Equal(t, "application/problem+json", r.Header.Get("Content-Type"))
		p := r.Problem()
		require.Equal(t, status, p.Status)
		require.NotEmpty(t, p.Detail)
	}
	return r
}

// DashboardProblem sends a dashboard request as c that must fail with
// status (see DashboardCall) and answers its problem.
func DashboardProblem(t testing.TB, c *client.Client, method, path string, body any, status int) client.Problem {
	t.Helper()
	return DashboardCall(t, c, method, path, body, status).Problem()
}
