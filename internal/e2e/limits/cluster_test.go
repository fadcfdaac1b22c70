package limits_test

import (
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notifytest"
)

// requirePostgres skips tests of several processes on SQLite: a SQLite
// database belongs to one process (one writer), so a cluster-wide rate or
// counter has nothing to share there.
func requirePostgres(t *testing.T) {
	t.Helper()
	if os.Getenv(notifytest.EnvPostgres) == "" {
		t.Skip("several worker or API processes share one database only on PostgreSQL (set " + notifytest.EnvPostgres + ")")
	}
}

// Two worker processes on one PostgreSQL keep a workspace's dispatch rate
// for the cluster: each takes its share from the heartbeat of live
// workers, so together they send at R, not 2R (SPEC allows 2R).
func TestDispatchClusterRate(t *testing.T) {
	t.Parallel()
	requirePostgres(t)
	if testing.Short() {
		t.Skip("paces ~15 s")
	}
	b := setup(t)
	b.smsProvider(t)
	peer := b.env.StartPeer(t, nil, notifytest.WithRole("worker"))
	const rate, n = 20, 320
	b.setLimit(t, "workspace", "", rate, true)
	// Both processes see each other before the sends start.
	require.Eventually(t, func() bool {
		return notifytest.Gauge(t, b.env.Daemon.Metrics.Registry, "notifyd_dispatch_cluster_workers") == 2 &&
			notifytest.Gauge(t, peer.Metrics.Registry, "notifyd_dispatch_cluster_workers") == 2
	}, 10*time.Second, 100*time.Millisecond)

	sendN(t, b.key, n, "cluster")
	at := b.delivered(t, "cluster", n, 90*time.Second)
	// Leave out the first 2 s (the full buckets' burst), then measure.
	from := 0
	for from < len(at) && at[from].Sub(at[0]) < 2*time.Second {
		from++
	}
	steady := at[from:]
	got := float64(len(steady)-1) / span(steady).Seconds()
	t.Logf("per second: %v", perSecond(at))
	t.Logf("two workers: %d sends, steady rate %.2f/s for R=%d (%.1f%%)", n, got, rate, 100*got/rate)
	// The cluster property: together at most R (+10%), not 2R. The lower
	// bound only checks the limit does not starve the sends; a loaded CI
	// machine (-race, 2 cores) may deliver below R on its own. The 10%
	// target both ways is measured by bench -scenario dispatchrate.
	require.LessOrEqual(t, got, rate*1.1, "cluster rate at most R + 10%%")
	floor := 0.7
	if raceBuild { // beside every other package's -race tests on 2 cores
		floor = 0.5
	}
	require.GreaterOrEqual(t, got, rate*floor, "cluster rate not starved")
	// Both processes sent.
	require.Positive(t, notifytest.HistogramCount(t, b.env.Daemon.Metrics.Registry, "notifyd_dispatch_limit_wait_seconds"))
	require.Positive(t, notifytest.HistogramCount(t, peer.Metrics.Registry, "notifyd_dispatch_limit_wait_seconds"))
}

// Two API processes on one PostgreSQL together admit exactly the request
// limit: the fixed-window counters are rows checked and grown in one
// statement.
func TestRequestLimitAcrossAPIProcesses(t *testing.T) {
	t.Parallel()
	requirePostgres(t)
	b := setup(t)
	b.putWorkspacePolicy(t, map[string]any{"windowSeconds": 3600, "maxRequests": 25})
	apis := []string{b.env.StartPeer(t, nil, notifytest.WithRole("api")).URL(), b.env.StartPeer(t, nil, notifytest.WithRole("api")).URL()}
	var mu sync.Mutex
	codes := map[int]int{}
	var wg sync.WaitGroup
	for i := range 60 {
		wg.Go(func() {
			k := *b.key
			k.BaseURL = apis[i%2]
			r, err := k.Signed(ctx, "GET", "/v1/notifications/00000000-0000-4000-8000-000000000000", nil)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			codes[r.Status]++
			mu.Unlock()
		})
	}
	wg.Wait()
	require.Equal(t, map[int]int{http.StatusNotFound: 25, http.StatusTooManyRequests: 35}, codes)
	// The rejections are counted by code on the process that answered.
	var rejected float64
	for _, u := range apis {
		rejected += scrape(t, u, `notifyd_requests_rejected_total{code="SVC-4290"}`)
	}
	require.Equal(t, 35.0, rejected)
}

// perSecond counts arrivals in each second after the first, for logs.
func perSecond(at []time.Time) []int {
	var out []int
	for _, a := range at {
		i := int(a.Sub(at[0]) / time.Second)
		for len(out) <= i {
			out = append(out, 0)
		}
		out[i]++
	}
	return out
}
