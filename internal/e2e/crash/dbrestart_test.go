package crash_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/e2e/chaosrun"
	"github.com/notifyd/notifyd/internal/notifytest"
	"github.com/notifyd/notifyd/internal/simulator"
)

// TestDatabaseRestart: notifyd reaches PostgreSQL through a TCP proxy
// that the test cuts for 3 s, as a server restart looks from the client
// (connections reset, then refused). Sends during the outage answer 503
// with Retry-After, never 500; sends succeed again by themselves once the
// database is back; every accepted request is delivered.
func TestDatabaseRestart(t *testing.T) {
	if os.Getenv(notifytest.EnvPostgres) == "" {
		t.Skip("a database server restart concerns PostgreSQL (set " + notifytest.EnvPostgres + ")")
	}
	bin := notifytest.BuildBinary(t)
	sim := simulator.New()
	simSrv := httptest.NewServer(sim)
	t.Cleanup(simSrv.Close)
	env, baseURL, owner := bootstrap(t, bin)
	var dbURL string
	for _, kv := range env {
		if v, ok := cutPrefix(kv, "NOTIFYD_DATABASE_URL="); ok {
			dbURL = v
		}
	}
	u, err := url.Parse(dbURL)
	require.NoError(t, err)
	px := newProxy(t, u.Host)
	u.Host = px.Addr
	env = append(env, "NOTIFYD_DATABASE_URL="+u.String())
	serve(t, bin, env, baseURL, "notifyd")
	key, keyID := smsRoute(t, owner, simSrv.URL)
	// Request limits lifted: the senders and the lookups at the end must
	// see the database, not a 429.
	lifted := map[string]any{"windowSeconds": 3600, "maxRequests": 1_000_000}
	dashboard(t, owner, "PUT", "/v1/limits/rate/workspace", lifted, http.StatusOK)
	dashboard(t, owner, "PUT", "/v1/limits/rate/api-keys/"+keyID, lifted, http.StatusOK)

	var (
		mu        sync.Mutex
		codes     = map[int]int{}
		accepted  []string
		noRetry   int
		lastOK    atomic.Int64
		stop      atomic.Bool
		wg        sync.WaitGroup
		sentCount atomic.Int64
	)
	for g := range 4 {
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				r, err := key.Signed(ctx, "POST", "/v1/notifications", map[string]any{"channel": "sms",
					"recipient": map[string]any{"address": fmt.Sprintf("010%04d%04d", g, i%10000)}, "content": map[string]any{"text": "db"}})
				if err != nil {
					t.Error(err)
					return
				}
				sentCount.Add(1)
				mu.Lock()
				codes[r.Status]++
				if r.Status == http.StatusServiceUnavailable && r.Header.Get("Retry-After") == "" {
					noRetry++
				}
				if r.Status == http.StatusCreated {
					var out struct {
						RequestID string `json:"requestId"`
					}
					if err := r.Data(&out); err == nil {
						accepted = append(accepted, out.RequestID)
					}
					lastOK.Store(time.Now().UnixNano())
				}
				mu.Unlock()
				if r.Status != http.StatusCreated {
					time.Sleep(50 * time.Millisecond)
				}
			}
		})
	}
	time.Sleep(1500 * time.Millisecond)
	px.Down()
	downAt := time.Now()
	time.Sleep(3 * time.Second)
	require.NoError(t, px.Up())
	upAt := time.Now()
	// Sends succeed again by themselves.
	deadline := time.Now().Add(20 * time.Second)
	for time.Unix(0, lastOK.Load()).Before(upAt) {
		require.True(t, time.Now().Before(deadline), "no send accepted 20 s after the database came back: %v", codes)
		time.Sleep(50 * time.Millisecond)
	}
	recovered := time.Unix(0, lastOK.Load()).Sub(upAt)
	time.Sleep(time.Second)
	stop.Store(true)
	wg.Wait()
	t.Logf("database away %s; first send accepted %s after it came back; answers: %v", upAt.Sub(downAt).Round(time.Millisecond),
		recovered.Round(time.Millisecond), codes)
	for code, n := range codes {
		require.True(t, code == http.StatusCreated || code == http.StatusServiceUnavailable, "%d answered %d times: %v", code, n, codes)
	}
	require.Positive(t, codes[http.StatusServiceUnavailable], "the outage was never seen")
	require.Zero(t, noRetry, "a 503 without Retry-After")

	// Every accepted request is delivered.
	deadline = time.Now().Add(60 * time.Second)
	for {
		m := byStatus(t, owner)
		if m["sent"] >= len(accepted) && m["queued"]+m["processing"] == 0 {
			break
		}
		require.True(t, time.Now().Before(deadline), "accepted requests not delivered: %v (accepted %d)", m, len(accepted))
		time.Sleep(200 * time.Millisecond)
	}
	for _, id := range accepted {
		require.Equal(t, "sent", lookup(t, key, id).Status, "request %s", id)
	}
}

func cutPrefix(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && s[:len(prefix)] == prefix {
		return s[len(prefix):], true
	}
	return "", false
}

// newProxy starts a chaosrun.Proxy to target, stopped after the test.
func newProxy(t *testing.T, target string) *chaosrun.Proxy {
	t.Helper()
	p, err := chaosrun.NewProxy(target)
	require.NoError(t, err)
	t.Cleanup(p.Down)
	return p
}
