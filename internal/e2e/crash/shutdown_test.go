package crash_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/notifytest"
	"github.com/notifyd/notifyd/internal/simulator"
)

// TestGracefulStop sends SIGTERM while a slow vendor holds 20 deliveries:
// readiness turns false at once, the process waits for the vendor call
// and records its outcome before it exits 0, and a restarted process
// finds every request sent with its one attempt, nothing sent again.
func TestGracefulStop(t *testing.T) {
	const n, latency = 20, 3 * time.Second
	bin := notifytest.BuildBinary(t)
	sim := simulator.New()
	simSrv := httptest.NewServer(sim)
	t.Cleanup(simSrv.Close)
	healthAddr := freeAddr(t)
	env, baseURL, owner := bootstrap(t, bin, "NOTIFYD_HEALTH_ADDR="+healthAddr, "NOTIFYD_SHUTDOWN_TIMEOUT=30s")
	first := serve(t, bin, env, baseURL, "first notifyd")
	key, _ := smsRoute(t, owner, simSrv.URL)
	simControl(t, simSrv.URL, "POST", "/_sim/faults", map[string]any{"kind": smsKind, "latencyMs": latency.Milliseconds(), "count": 1_000_000})

	var ids []string
	for i := 0; i < n; i++ {
		r, err := key.Signed(ctx, "POST", "/v1/notifications", map[string]any{"channel": "sms",
			"recipient": map[string]any{"address": fmt.Sprintf("010%08d", i)}, "content": map[string]any{"text": "stop"}})
		require.NoError(t, err)
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
		var out struct {
			RequestID string `json:"requestId"`
		}
		require.NoError(t, r.Data(&out))
		ids = append(ids, out.RequestID)
	}
	deadline := time.Now().Add(30 * time.Second)
	for byStatus(t, owner)["processing"] < n {
		require.True(t, time.Now().Before(deadline), "the sends never reached the vendor")
		time.Sleep(20 * time.Millisecond)
	}

	stopAt := time.Now()
	require.NoError(t, first.cmd.Process.Signal(syscall.SIGTERM))
	// While the vendor call is in flight the process is stopping: the
	// probes listener still answers, not ready.
	sawUnready := false
	for !sawUnready && time.Since(stopAt) < latency/2 {
		resp, err := http.Get("http://" + healthAddr + "/readyz")
		if err == nil {
			_ = resp.Body.Close()
			sawUnready = resp.StatusCode == http.StatusServiceUnavailable
		}
		time.Sleep(20 * time.Millisecond)
	}
	require.True(t, sawUnready, "readiness stays true during the graceful stop")
	select {
	case <-first.done:
	case <-time.After(40 * time.Second):
		t.Fatal("serve did not exit within the shutdown timeout")
	}
	took := time.Since(stopAt)
	require.Equal(t, 0, first.cmd.ProcessState.ExitCode(), first.logs.String())
	require.GreaterOrEqual(t, took, latency/2, "exited without waiting for the vendor call")
	t.Logf("exited %s after SIGTERM", took.Round(time.Millisecond))
	require.Len(t, sim.Messages(smsKind, "", 0), n)

	// The outcome was recorded before the exit: a restart finds every
	// request sent, with one successful attempt, and sends nothing again.
	simControl(t, simSrv.URL, "DELETE", "/_sim/faults?kind="+smsKind, nil)
	serve(t, bin, env, baseURL, "second notifyd")
	for _, id := range ids {
		out := lookup(t, key, id)
		require.Equal(t, "sent", out.Status, "request %s", id)
		require.Len(t, out.Attempts, 1, "request %s", id)
		require.Equal(t, "success", out.Attempts[0].Status)
	}
	time.Sleep(time.Second)
	require.Len(t, sim.Messages(smsKind, "", 0), n, "nothing is sent twice")
}

// requestState is the part of a status lookup the crash tests read.
type requestState struct {
	Status   string `json:"status"`
	Attempts []struct {
		Status string `json:"status"`
	} `json:"attempts"`
}

// lookup reads request id through the signed status lookup.
func lookup(t *testing.T, key *client.Client, id string) requestState {
	t.Helper()
	return notifytest.Data[requestState](t, notifytest.Signed(t, key, "GET", "/v1/notifications/"+id, nil), http.StatusOK)
}

// smsRoute registers the simulator's vendorB SMS account as the only sms
// route and answers a key that may send and read, and its id.
func smsRoute(t *testing.T, owner *client.Client, simURL string) (*client.Client, string) {
	t.Helper()
	notifytest.RegisterRoute(t, owner, "sms", smsKind, smsConfig(simURL))
	return sendKey(t, owner)
}

// smsConfig is the configJson of the simulator's vendorB SMS account.
func smsConfig(simURL string) map[string]string {
	return map[string]string{"base_url": simURL, "vendorb_api_key": "k", "vendorb_api_secret": "s", "vendorb_sender": "0212345678"}
}

// sendKey creates an API key that may send and read, and answers it and
// its id.
func sendKey(t *testing.T, owner *client.Client) (*client.Client, string) {
	t.Helper()
	key, id, err := owner.CreateAPIKey(ctx, "crash", "notifications:send", "notifications:read")
	require.NoError(t, err)
	return key, id
}

// byStatus reads the dashboard metrics' request counts per status.
func byStatus(t *testing.T, owner *client.Client) map[string]int {
	t.Helper()
	return notifytest.Decode[struct {
		ByStatus map[string]int `json:"byStatus"`
	}](t, dashboard(t, owner, "GET", "/v1/metrics", nil, http.StatusOK), http.StatusOK).ByStatus
}
