package crash_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notifytest"
	"github.com/notifyd/notifyd/internal/simulator"
)

// TestScaleOut is the README's "Scaling out" story, run as written: one
// PostgreSQL database, `notifyd migrate` (here through bootstrap), two
// `serve --role api --no-migrate` on their own addresses and two
// `serve --role worker --no-migrate` with probes listeners. Sends go
// through both api processes; a request limit holds exactly across
// them; one worker is killed mid-delivery and the other rescues its work
// within seconds; the dispatch limit holds across the workers.
func TestScaleOut(t *testing.T) {
	if os.Getenv(notifytest.EnvPostgres) == "" {
		t.Skip("several processes share one database only on PostgreSQL (set " + notifytest.EnvPostgres + ")")
	}
	const n, rate, limited = 400, 50, 40
	bin := notifytest.BuildBinary(t)
	sim := simulator.New()
	simSrv := httptest.NewServer(sim)
	t.Cleanup(simSrv.Close)
	env, apiURL, owner := bootstrap(t, bin)

	var apis []string
	for i := range 2 {
		addr := apiURL[len("http://"):]
		if i > 0 {
			addr = freeAddr(t)
		}
		e := append(append([]string{}, env...), "NOTIFYD_ADDR="+addr, "NOTIFYD_ROLE=api")
		serveArgs(t, bin, e, "http://"+addr, fmt.Sprintf("api %d", i+1), "--no-migrate")
		apis = append(apis, "http://"+addr)
	}
	var workers []*node
	for i := range 2 {
		health := freeAddr(t)
		e := append(append([]string{}, env...), "NOTIFYD_ROLE=worker", "NOTIFYD_HEALTH_ADDR="+health)
		workers = append(workers, serveArgs(t, bin, e, "http://"+health, fmt.Sprintf("worker %d", i+1), "--no-migrate"))
	}

	key, _ := smsRoute(t, owner, simSrv.URL)
	dashboard(t, owner, "PUT", "/v1/limits/dispatch", map[string]any{"scope": "workspace", "ratePerSecond": rate, "enabled": true}, http.StatusOK)
	simControl(t, simSrv.URL, "POST", "/_sim/faults", map[string]any{"kind": smsKind, "latencyMs": 300, "count": 1_000_000})

	// The request limit is exact across the api processes: a second key
	// limited to `limited` requests an hour, 2×limited lookups spread
	// over both processes.
	reader, readerID, err := owner.CreateAPIKey(ctx, "limited", "notifications:read")
	require.NoError(t, err)
	dashboard(t, owner, "PUT", "/v1/limits/rate/api-keys/"+readerID, map[string]any{"windowSeconds": 3600, "maxRequests": limited}, http.StatusOK)
	codes := map[int]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range 2 * limited {
		wg.Go(func() {
			k := *reader
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
	require.Equal(t, map[int]int{http.StatusNotFound: limited, http.StatusTooManyRequests: limited}, codes)

	// Sends through both api processes.
	for b := 0; b < n/50; b++ {
		items := make([]any, 50)
		for i := range items {
			items[i] = map[string]any{"channel": "sms", "recipient": map[string]any{"address": fmt.Sprintf("010%08d", b*50+i)},
				"content": map[string]any{"text": "scale"}}
		}
		k := *key
		k.BaseURL = apis[b%2]
		r, err := k.Signed(ctx, "POST", "/v1/notifications/bulk", map[string]any{"items": items})
		require.NoError(t, err)
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	}

	// Kill one worker once a third has arrived.
	deadline := time.Now().Add(60 * time.Second)
	for len(sim.Messages(smsKind, "", 0)) < n/3 {
		require.True(t, time.Now().Before(deadline), "deliveries did not start")
		time.Sleep(10 * time.Millisecond)
	}
	workers[0].kill()
	killedAt := time.Now()
	atKill := len(sim.Messages(smsKind, "", 0))
	// The limit has been measured below (before the kill); lifting it now
	// leaves the dead worker's rescue as the only wait: PERFORMANCE.md's
	// target, every request terminal within 15 s of the kill.
	dashboard(t, owner, "PUT", "/v1/limits/dispatch", map[string]any{"scope": "workspace", "ratePerSecond": rate, "enabled": false}, http.StatusOK)
	// Under -race in CI the other packages' tests share the 2 cores and
	// can stall these processes for seconds: the bound doubles there (the
	// 15 s figure is measured unloaded: docs/BENCHMARKS.md, 7.9 s).
	within := recoverWithin
	if raceBuild {
		within *= 2
	}
	var m map[string]int
	for {
		m = byStatus(t, owner)
		if m["sent"]+m["failed"]+m["canceled"] == n {
			break
		}
		require.True(t, time.Since(killedAt) < within, "not terminal %s after the kill: %v", within, m)
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("killed a worker at %d of %d delivered; all terminal %s after the kill: %v",
		atKill, n, time.Since(killedAt).Round(time.Millisecond), m)
	require.Equal(t, n, m["sent"])

	msgs := sim.Messages(smsKind, "", 0)
	per := map[string]int{}
	for _, x := range msgs {
		per[x.To]++
	}
	require.Len(t, per, n, "every recipient got its message")
	t.Logf("duplicates: %d (messages in flight at the killed worker)", len(msgs)-n)

	// The dispatch limit held across the workers: after the first 2 s
	// (the buckets' burst) and before the kill, at most rate + 10%.
	var steady []time.Time
	for _, x := range msgs {
		if x.ReceivedAt.After(msgs[0].ReceivedAt.Add(2*time.Second)) && x.ReceivedAt.Before(killedAt) {
			steady = append(steady, x.ReceivedAt)
		}
	}
	if len(steady) > rate {
		got := float64(len(steady)-1) / steady[len(steady)-1].Sub(steady[0]).Seconds()
		t.Logf("two workers: steady rate %.1f/s for a limit of %d/s", got, rate)
		require.LessOrEqual(t, got, rate*1.1)
	}
}

// serveArgs starts `notifyd serve ARGS...` with env and waits until
// readyURL/readyz answers 200.
func serveArgs(t *testing.T, bin string, env []string, readyURL, name string, args ...string) *node {
	t.Helper()
	return startNode(t, bin, env, readyURL, name, append([]string{"serve"}, args...)...)
}
