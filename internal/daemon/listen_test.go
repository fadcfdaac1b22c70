package daemon_test

import (
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/config"
	"github.com/notifyd/notifyd/internal/daemon"
	"github.com/notifyd/notifyd/internal/notifytest"
)

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	res, err := http.Get(url)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, string(b)
}

// NOTIFYD_METRICS_ADDR moves /metrics to a listener of its own: the API's
// listener no longer serves it (issue 17 finding 3).
func TestMetricsOnTheirOwnAddress(t *testing.T) {
	env := notifytest.StartDaemon(t, func(c *config.Config) { c.MetricsAddr = "127.0.0.1:0" })
	d := env.Daemon
	require.NotEmpty(t, d.MetricsAddr())

	status, _ := get(t, d.URL()+"/healthz")
	require.Equal(t, http.StatusOK, status)
	status, _ = get(t, d.URL()+"/metrics")
	require.Equal(t, http.StatusNotFound, status)

	status, body := get(t, "http://"+d.MetricsAddr()+"/metrics")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `notifyd_http_requests_total{method="GET",route="GET /healthz",status="200"} 1`)
	require.Contains(t, body, `notifyd_http_requests_total{method="GET",route="unmatched",status="404"} 1`)
	status, _ = get(t, "http://"+d.MetricsAddr()+"/v1/me")
	require.Equal(t, http.StatusNotFound, status, "only /metrics there")
}

// A plain-http base URL on a listener other hosts can reach is warned
// about at start: RFC 8058 one-click links must be https (issue 17
// finding 13). A loopback listener is not (https base URLs:
// TestWarnPlainBaseURL; a :0 listener's base URL is always http).
func TestPlainBaseURLWarning(t *testing.T) {
	for _, tc := range []struct {
		addr string
		warn bool
	}{
		{"127.0.0.1:0", false},
		{"0.0.0.0:0", true},
	} {
		cfg := config.Default()
		cfg.DatabaseURL = notifytest.DatabaseURL(t)
		cfg.Addr = tc.addr
		cfg.SecretKey = strings.Repeat("0", 63) + "1"
		cfg.Role = "api"
		log := &notifytest.Buffer{}
		d := daemon.New(cfg, slog.New(slog.NewTextHandler(log, nil)), nil)
		require.NoError(t, d.Open(t.Context()))
		require.NoError(t, d.Close(t.Context()))
		warned := strings.Contains(log.String(), `level=WARN msg="NOTIFYD_BASE_URL is not https`)
		require.Equal(t, tc.warn, warned, tc.addr)
	}
}

// A worker serves no API: NOTIFYD_HEALTH_ADDR gives it a listener with
// the probes and its metrics (issue 16).
func TestWorkerHealthListener(t *testing.T) {
	env := notifytest.StartDaemon(t)
	w := env.StartPeer(t, nil, notifytest.WithRole("worker"), func(c *config.Config) { c.HealthAddr = "127.0.0.1:0" })
	require.NotEmpty(t, w.HealthAddr())
	for _, path := range []string{"/healthz", "/readyz"} {
		status, body := get(t, "http://"+w.HealthAddr()+path)
		require.Equal(t, http.StatusOK, status, path)
		require.True(t, strings.HasPrefix(body, `{"status":`), body)
	}
	status, body := get(t, "http://"+w.HealthAddr()+"/metrics")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, "notifyd_dispatch_cluster_workers")
	status, _ = get(t, "http://"+w.HealthAddr()+"/v1/me")
	require.Equal(t, http.StatusNotFound, status, "no API on the probes listener")
}
