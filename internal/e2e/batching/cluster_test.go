package batching_test

import (
	"fmt"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notifytest"
)

// Two worker processes on one PostgreSQL keep a provider account's vendor
// call budget for the cluster: each process's batcher spaces its calls at
// its heartbeat share of the account's calls per second, so together they
// call at most the budget, not twice it.
func TestCallBudgetAcrossWorkers(t *testing.T) {
	t.Parallel()
	if os.Getenv(notifytest.EnvPostgres) == "" {
		t.Skip("several worker processes share one database only on PostgreSQL (set " + notifytest.EnvPostgres + "); SQLite runs one process, which keeps the whole budget")
	}
	if testing.Short() {
		t.Skip("paces ~10 s")
	}
	b := setup(t)
	peer := b.env.StartPeer(t, nil, notifytest.WithRole("worker"))
	const cps, size, n = 4, 2, 64
	cfg := b.env.SimConfig("vendorb_sms", nil)
	cfg["dispatch_max_requests_per_second"] = fmt.Sprint(cps)
	cfg["dispatch_max_batch_size"] = fmt.Sprint(size)
	cfg["dispatch_batch_window_ms"] = "0"
	b.env.SimRoute(t, "sms", "vendorb_sms", cfg)
	// Both processes see each other before the sends start.
	require.Eventually(t, func() bool {
		return notifytest.Gauge(t, b.env.Daemon.Metrics.Registry, "notifyd_dispatch_cluster_workers") == 2 &&
			notifytest.Gauge(t, peer.Metrics.Registry, "notifyd_dispatch_cluster_workers") == 2
	}, 10*time.Second, 100*time.Millisecond)

	// Many small bulks, so that both processes' job fetches get some even
	// on a loaded machine (with 8 bulks of 8 one process once took all).
	var ids []string
	for k := range n / 4 {
		items := make([]any, 4)
		for i := range items {
			items[i] = notifytest.SMS(fmt.Sprintf("0107777%04d", k*4+i), fmt.Sprintf("cluster %d", k*4+i))
		}
		ids = append(ids, notifytest.Bulk(t, b.key, items)...)
		time.Sleep(100 * time.Millisecond)
	}
	for _, id := range ids {
		require.Equal(t, "sent", notifytest.WaitWithin(t, b.key, id, 90*time.Second).Status)
	}

	var at []time.Time
	for _, g := range calls(b.env.Sim, "vendorb_sms") {
		require.LessOrEqual(t, len(g), size)
		at = append(at, g[0].ReceivedAt)
	}
	sort.Slice(at, func(i, j int) bool { return at[i].Before(at[j]) })
	require.GreaterOrEqual(t, len(at), n/size)
	// Leave out a short start-up (a process whose first heartbeat saw no
	// peer demand calls at the whole rate until its next one), then measure.
	from := 0
	for from < len(at) && at[from].Sub(at[0]) < 2*time.Second {
		from++
	}
	steady := at[from:]
	rate := float64(len(steady)-1) / steady[len(steady)-1].Sub(steady[0]).Seconds()
	peak := 0
	for i := range steady {
		j := i
		for j < len(steady) && steady[j].Sub(steady[i]) < time.Second {
			j++
		}
		peak = max(peak, j-i)
	}
	local, remote := notifytest.CounterSum(t, b.env.Daemon.Metrics.Registry, "notifyd_batch_flushes_total"),
		notifytest.CounterSum(t, peer.Metrics.Registry, "notifyd_batch_flushes_total")
	var rel []string
	for _, a := range at {
		rel = append(rel, a.Sub(at[0]).Round(time.Millisecond).String())
	}
	t.Logf("calls at %v", rel)
	t.Logf("%d calls (%v here, %v on the peer); steady %.2f calls/s for %d allowed; peak %d in any 1 s", len(at), local, remote, rate, cps, peak)
	require.LessOrEqual(t, rate, cps*1.05, "cluster calls per second within the budget (5%% spacing margin)")
	require.LessOrEqual(t, peak, cps+1, "no second far above the budget")
	require.GreaterOrEqual(t, rate, cps*0.6, "the budget is used")
	require.Positive(t, local, "both processes called the vendor")
	require.Positive(t, remote, "both processes called the vendor")
}
