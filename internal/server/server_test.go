package server_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/api"
	"github.com/notifyd/notifyd/internal/metrics"
	"github.com/notifyd/notifyd/internal/notifytest"
	"github.com/notifyd/notifyd/internal/server"
	"github.com/notifyd/notifyd/internal/web"
	"github.com/notifyd/notifyd/openapi"
)

// front is the whole HTTP front over a running daemon's service, with its
// own registry and a log kept for inspection.
type front struct {
	env     *notifytest.Env
	h       http.Handler
	srv     *httptest.Server
	metrics *metrics.Metrics
	logs    *notifytest.Buffer
}

func newFront(t *testing.T) *front {
	t.Helper()
	env := notifytest.StartDaemon(t)
	logs := &notifytest.Buffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ao := env.Daemon.APIOptions()
	ao.BaseURL, ao.Logger, ao.LimitMetrics = "http://notifyd.test", log, nil
	a := api.New(ao)
	m := metrics.New()
	// The public pages live in internal/web.
	wo := env.Daemon.ConsoleOptions(nil)
	wo.BaseURL, wo.Logger = "", log
	extra := server.Merge(web.New(wo).Handlers(), a.PublicHandlers())
	h := server.Handler(server.Options{API: a, Metrics: m, Logger: log, Ready: env.Daemon.DB.Ping,
		OpenAPI: openapi.OpenAPI, Extra: extra})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &front{env: env, h: h, srv: srv, metrics: m, logs: logs}
}

func (f *front) do(t *testing.T, method, path string) int {
	t.Helper()
	req, err := http.NewRequest(method, f.srv.URL+path, nil)
	require.NoError(t, err)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, res.Body)
	_ = res.Body.Close()
	return res.StatusCode
}

// series counts the label sets of one metric family.
func (f *front) series(t *testing.T, name string) int {
	t.Helper()
	fams, err := f.metrics.Registry.Gather()
	require.NoError(t, err)
	for _, fam := range fams {
		if fam.GetName() == name {
			return len(fam.GetMetric())
		}
	}
	return 0
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Issue 17 finding 3: a client chose the method label (and could choose
// many paths), so a burst of odd requests grew /metrics without bound.
func TestMetricLabelsStayBoundedUnderRandomMethodsAndPaths(t *testing.T) {
	f := newFront(t)
	f.do(t, "GET", "/healthz")
	for i := range 300 {
		method := "X" + strings.ToUpper(randHex(256)) // a 513-byte method
		path := "/v1/" + randHex(8)
		if i%2 == 0 {
			method, path = "GET", "/"+randHex(8)+"/"+randHex(8)
		}
		f.do(t, method, path)
	}
	// healthz, plus one series each for the unknown methods and the
	// unmatched GETs (two statuses at most: 404 and 405).
	require.LessOrEqual(t, f.series(t, "notifyd_http_requests_total"), 4)
	require.LessOrEqual(t, f.series(t, "notifyd_http_request_duration_seconds"), 3)
	require.Equal(t, 150.0, notifytest.Counter(t, f.metrics.Registry, "notifyd_http_requests_total",
		map[string]string{"route": "unmatched", "method": "other", "status": "405"})+
		notifytest.Counter(t, f.metrics.Registry, "notifyd_http_requests_total",
			map[string]string{"route": "unmatched", "method": "other", "status": "404"}))

	var body bytes.Buffer
	res, err := http.Get(f.srv.URL + "/metrics")
	require.NoError(t, err)
	_, _ = io.Copy(&body, res.Body)
	_ = res.Body.Close()
	require.Less(t, body.Len(), 200<<10, "/metrics stays small")
	require.NotContains(t, body.String(), "X0", "no client method in the labels")
}

// Issue 17 finding 13: health, metrics, the OpenAPI document and public
// pages have route labels of their own instead of "unmatched".
func TestRouteLabels(t *testing.T) {
	f := newFront(t)
	f.do(t, "GET", "/healthz")
	f.do(t, "GET", "/readyz")
	f.do(t, "GET", "/metrics")
	f.do(t, "GET", "/openapi.yaml")
	f.do(t, "GET", "/v1/otp/link/"+randHex(16))
	f.do(t, "GET", "/v1/newsletter/unsubscribe?token="+randHex(16))
	f.do(t, "GET", "/v1/nothing-here")
	f.do(t, "CONNECT", "/v1/"+randHex(8))
	for route, status := range map[string]string{
		"GET /healthz":                   "200",
		"GET /readyz":                    "200",
		"GET /metrics":                   "200",
		"GET /openapi.yaml":              "200",
		"GET /v1/otp/link/{linkToken}":   "404",
		"GET /v1/newsletter/unsubscribe": "200",
		"unmatched":                      "404",
	} {
		require.Equal(t, 1.0, notifytest.Counter(t, f.metrics.Registry, "notifyd_http_requests_total",
			map[string]string{"route": route, "method": "GET", "status": status}), route)
	}
	require.Equal(t, 1.0, notifytest.Counter(t, f.metrics.Registry, "notifyd_http_requests_total",
		map[string]string{"route": "unmatched", "method": "CONNECT", "status": "404"}))
}

// Issue 17 finding 8: OTP link tokens (and an unsubscribe token put in the
// path) are redacted in the access log.
func TestAccessLogRedactsPathTokens(t *testing.T) {
	f := newFront(t)
	otpToken, unsubToken := "otp"+randHex(16), "uns"+randHex(16)
	f.do(t, "GET", "/v1/otp/link/"+otpToken)
	f.do(t, "POST", "/v1/otp/link/"+otpToken)
	f.do(t, "GET", "/v1/newsletter/unsubscribe/"+unsubToken)
	f.do(t, "POST", "/v1/newsletter/unsubscribe/one-click?token="+unsubToken)
	// Inbound hook tokens (issue 36), in each of the receiving layouts.
	hookToken := "hk_" + randHex(16)
	f.do(t, "POST", "/v1/hooks/"+hookToken)
	f.do(t, "PUT", "/v1/hooks/"+hookToken+"/backups")
	f.do(t, "POST", "/v1/hooks/notify/"+hookToken)
	logs := f.logs.String()
	require.NotContains(t, logs, hookToken)
	require.Contains(t, logs, "path=/v1/hooks/[redacted] ")
	require.Contains(t, logs, "path=/v1/hooks/[redacted]/backups ")
	require.Contains(t, logs, "path=/v1/hooks/notify/[redacted] ")
	require.NotContains(t, logs, otpToken)
	require.NotContains(t, logs, unsubToken)
	require.Equal(t, 2, strings.Count(logs, "path=/v1/otp/link/[redacted] "), logs)
	require.Contains(t, logs, "path=/v1/newsletter/unsubscribe/[redacted] ")
	require.Contains(t, logs, "path=/v1/newsletter/unsubscribe/one-click ", "no token in this path: shown whole")
}

// Issue 17 finding 13: a client that stops sending its body, or leaves
// before its answer, is counted as 499 and logged at debug, not as a 500
// logged as an error.
func TestClientGoneIs499(t *testing.T) {
	f := newFront(t)

	// The body is cut short: the client closes its sending side.
	conn, err := net.Dial("tcp", f.srv.Listener.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	_, err = fmt.Fprintf(conn, "POST /v1/templates HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"code\":", f.env.Owner.Token)
	require.NoError(t, err)
	require.NoError(t, conn.(*net.TCPConn).CloseWrite())
	_, _ = http.ReadResponse(bufio.NewReader(conn), nil)

	// The client has gone while the request is served (its context ends).
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req := httptest.NewRequestWithContext(ctx, "GET", "/v1/templates", nil)
	req.Header.Set("Authorization", "Bearer "+f.env.Owner.Token)
	f.h.ServeHTTP(httptest.NewRecorder(), req)

	count := func(route, status string) float64 {
		return notifytest.Counter(t, f.metrics.Registry, "notifyd_http_requests_total",
			map[string]string{"route": route, "method": strings.Fields(route)[0], "status": status})
	}
	require.Eventually(t, func() bool { return count("POST /v1/templates", "499") == 1 }, 5*time.Second, 10*time.Millisecond)
	require.Equal(t, 1.0, count("GET /v1/templates", "499"))
	require.Zero(t, count("POST /v1/templates", "500"))
	require.Zero(t, count("GET /v1/templates", "500"))
	logs := f.logs.String()
	require.NotContains(t, logs, "level=ERROR")
	require.Equal(t, 2, strings.Count(logs, `level=DEBUG msg="client closed request"`), logs)
}

// countingBody is an endless request body of spaces (or of fill) that
// counts what was read.
type countingBody struct {
	n    atomic.Int64
	fill byte
}

func (b *countingBody) Read(p []byte) (int, error) {
	c := b.fill
	if c == 0 {
		c = ' '
	}
	for i := range p {
		p[i] = c
	}
	b.n.Add(int64(len(p)))
	return len(p), nil
}

func (b *countingBody) Close() error { return nil }

// Issue 17 finding 6: a request that fails authentication is refused
// before its body is read; the SPEC details and the order of the checks
// stay as they were, and an authenticated request still reads its body
// (up to the limit).
func TestBodyIsNotReadBeforeAuthentication(t *testing.T) {
	f := newFront(t)
	signer, _, err := f.env.Owner.CreateAPIKey(context.Background(), "k", "notifications:send")
	require.NoError(t, err)
	keyID, _, _ := strings.Cut(signer.APIKey, ".")
	now := strconv.FormatInt(time.Now().Unix(), 10)
	stale := strconv.FormatInt(time.Now().Add(-time.Hour).Unix(), 10)
	badSig := strings.Repeat("00", 32)

	for _, tc := range []struct {
		name, path string
		headers    map[string]string
		status     int
		detail     string
		readsBody  bool
	}{
		{name: "dashboard without token", path: "/v1/templates", status: 401, detail: "Missing or malformed Authorization header"},
		{name: "dashboard with a forged token", path: "/v1/templates",
			headers: map[string]string{"Authorization": "Bearer " + randHex(16)}, status: 401},
		{name: "dashboard authenticated", path: "/v1/templates",
			headers: map[string]string{"Authorization": "Bearer " + f.env.Owner.Token}, status: 413, readsBody: true},
		{name: "signed without headers", path: "/v1/notifications", status: 401, detail: "Invalid API key"},
		{name: "signed with an unknown key", path: "/v1/notifications",
			headers: map[string]string{"X-API-Key": "nk_" + randHex(8) + ".secret", "X-Timestamp": now, "X-Nonce": "n1"},
			status:  401, detail: "Invalid API key"},
		{name: "signed with a wrong key secret", path: "/v1/notifications",
			headers: map[string]string{"X-API-Key": keyID + ".wrong", "X-Timestamp": now, "X-Nonce": "n1", "X-Signature": badSig},
			status:  401, detail: "Invalid API key"},
		{name: "signed with a stale timestamp and no signature", path: "/v1/notifications",
			headers: map[string]string{"X-API-Key": signer.APIKey, "X-Timestamp": stale, "X-Nonce": "n1"},
			status:  401, detail: "Timestamp outside tolerance"},
		{name: "signed without nonce", path: "/v1/notifications",
			headers: map[string]string{"X-API-Key": signer.APIKey, "X-Timestamp": now, "X-Signature": badSig},
			status:  401, detail: "Invalid nonce"},
		{name: "signed without signature", path: "/v1/notifications",
			headers: map[string]string{"X-API-Key": signer.APIKey, "X-Timestamp": now, "X-Nonce": "n1"},
			status:  401, detail: "Invalid signature"},
		{name: "signed with a malformed signature", path: "/v1/notifications/" + randHex(4) + "/cancel",
			headers: map[string]string{"X-API-Key": signer.APIKey, "X-Timestamp": now, "X-Nonce": "n1", "X-Signature": "zz"},
			status:  401, detail: "Invalid signature"},
		{name: "signed, only the signature left to check", path: "/v1/notifications",
			headers: map[string]string{"X-API-Key": signer.APIKey, "X-Timestamp": now, "X-Nonce": "n1", "X-Signature": badSig},
			status:  413, readsBody: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := &countingBody{}
			req := httptest.NewRequest("POST", tc.path, nil)
			req.Body, req.ContentLength = body, -1
			for k, v := range tc.headers {
				req.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			f.h.ServeHTTP(rec, req)
			require.Equal(t, tc.status, rec.Code, rec.Body.String())
			if tc.detail != "" {
				var p api.Problem
				require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &p))
				require.Equal(t, tc.detail, p.Detail)
			}
			if tc.readsBody {
				require.Greater(t, body.n.Load(), int64(1<<20), "the body is read up to the limit")
			} else {
				require.Zero(t, body.n.Load(), "the body was read before the refusal")
			}
		})
	}
}

// Issue 29 finding 9: a public route reads at most 16 KiB of a body sent
// before anything is known of its sender, parses no multipart form but
// the RFC 8058 one-click's (the unsubscribe one and the preference
// page's), and a vendor callback reads nothing before its
// secret is proven.
func TestPublicBodiesAreBounded(t *testing.T) {
	f := newFront(t)
	const limit = 16 << 10
	for _, tc := range []struct {
		name, path, contentType string
		status                  int
		detail                  string // problem+json detail, or a text of the HTML page
		readsBody               bool
	}{
		{name: "API login", path: "/v1/auth/login", contentType: "application/json",
			status: 413, detail: "Request body must be at most 16384 bytes", readsBody: true},
		{name: "console login", path: "/login", contentType: "application/x-www-form-urlencoded",
			status: 413, detail: "The form must be at most 16384 bytes", readsBody: true},
		{name: "console login, multipart", path: "/login", contentType: "multipart/form-data; boundary=x",
			status: 400, detail: "This form takes no file upload: send it as application/x-www-form-urlencoded"},
		{name: "unsubscribe form", path: "/v1/newsletter/unsubscribe", contentType: "application/x-www-form-urlencoded",
			status: 413, detail: "The unsubscribe form must be at most 16384 bytes.", readsBody: true},
		{name: "unsubscribe form, multipart", path: "/v1/newsletter/unsubscribe", contentType: "multipart/form-data; boundary=x",
			status: 400, detail: "The unsubscribe token is missing"},
		{name: "confirmation form", path: "/v1/newsletter/confirm", contentType: "application/x-www-form-urlencoded",
			status: 413, detail: "The confirmation form must be at most 16384 bytes.", readsBody: true},
		{name: "confirmation form, multipart", path: "/v1/newsletter/confirm", contentType: "multipart/form-data; boundary=x",
			status: 400, detail: "This confirmation link is invalid"},
		{name: "one-click unsubscribe", path: "/v1/newsletter/unsubscribe/one-click?token=t", contentType: "application/json",
			status: 413, detail: "Request body must be at most 16384 bytes", readsBody: true},
		{name: "one-click unsubscribe, multipart (RFC 8058)", path: "/v1/newsletter/unsubscribe/one-click?token=t", contentType: "multipart/form-data; boundary=x",
			status: 413, detail: "Request body must be at most 16384 bytes", readsBody: true},
		{name: "preference page form", path: "/v1/preferences/page?token=t", contentType: "application/x-www-form-urlencoded",
			status: 413, detail: "The preferences form must be at most 16384 bytes.", readsBody: true},
		{name: "preference page one-click, multipart (RFC 8058)", path: "/v1/preferences/page?token=t&category=c", contentType: "multipart/form-data; boundary=x",
			status: 413, detail: "The preferences form must be at most 16384 bytes.", readsBody: true},
		{name: "vendor callback of an unknown account", path: "/v1/callbacks/00000000-0000-7000-8000-000000000000?token=t", contentType: "application/json",
			status: 404, detail: "Provider not found"},
		{name: "OTP link", path: "/v1/otp/link/" + randHex(16), contentType: "application/x-www-form-urlencoded",
			status: 404, detail: "Link invalid or expired"},
		{name: "inbound hook of an unknown token", path: "/v1/hooks/hk_" + strings.Repeat("a", 32), contentType: "text/plain",
			status: 404, detail: "No route matches POST /v1/hooks/[redacted]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Empty lines: a multipart reader skips them looking for the
			// boundary, so only the limit stops it.
			body := &countingBody{fill: '\n'}
			req := httptest.NewRequest("POST", tc.path, nil)
			req.Body, req.ContentLength = body, -1
			req.Header.Set("Content-Type", tc.contentType)
			rec := httptest.NewRecorder()
			f.h.ServeHTTP(rec, req)
			require.Equal(t, tc.status, rec.Code, rec.Body.String())
			require.Contains(t, rec.Body.String(), tc.detail)
			if tc.readsBody {
				require.Greater(t, body.n.Load(), int64(limit), "the body is read up to the limit")
				require.LessOrEqual(t, body.n.Load(), int64(limit+1), "the body is read no further than the limit")
			} else {
				require.Zero(t, body.n.Load(), "the body was read")
			}
		})
	}
}
