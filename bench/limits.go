package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"sort"
	"time"

	"github.com/notifyd/notifyd/internal/simulator"
)

// dispatchRate: a workspace dispatch limit of R per second, a few thousand
// notifications accepted ahead, then worker processes deliver them through
// the simulator; the measured rate against R, with one worker process
// (SQLite and PostgreSQL) and with two (PostgreSQL: the processes split R
// by heartbeat). Target: within 10% of R.
const (
	dispatchRateR = 50
	dispatchRateN = 3000 // -n below the default 20,000 overrides it
)

func (b *bench) dispatchRate(ctx context.Context) error {
	n := dispatchRateN
	if b.n < 20000 {
		n = b.n
	}
	header(fmt.Sprintf("dispatch limit of %d/s, %d messages", dispatchRateR, n), b)
	workers := []int{1}
	if b.db == "postgres" {
		workers = append(workers, 2)
	}
	if os.Getenv("BENCH_WORKERS") == "2" {
		workers = []int{2}
	}
	for _, w := range workers {
		steady, overall, err := b.dispatchRatePhase(ctx, n, w)
		if err != nil {
			return err
		}
		fmt.Printf("%-44s %9.2f/s  (overall %.2f/s, burst included)\n", fmt.Sprintf("%d worker process(es): steady rate", w), steady, overall)
		fmt.Printf("%-44s %8.3f  (target 0.90 .. 1.10)\n", fmt.Sprintf("ratio %d worker(s) measured / R", w), steady/dispatchRateR)
	}
	return nil
}

// dispatchRatePhase runs one fresh database with an API process and
// `workers` worker processes and returns the steady delivered rate (after
// the first 2 s, which hold the buckets' initial burst) and the overall one.
func (b *bench) dispatchRatePhase(ctx context.Context, n, workers int) (steady, overall float64, err error) {
	sim, simURL := b.sim()
	url, err := b.databaseURL()
	if err != nil {
		return 0, 0, err
	}
	api, err := b.daemon(ctx, url, "api")
	if err != nil {
		return 0, 0, err
	}
	owner, key, err := apiKey(ctx, api, 8)
	if err != nil {
		return 0, 0, err
	}
	if err := smsRoute(ctx, owner, simURL); err != nil {
		return 0, 0, err
	}
	r, err := owner.Dashboard(ctx, "PUT", "/v1/limits/dispatch", map[string]any{"scope": "workspace", "ratePerSecond": dispatchRateR})
	if err != nil || r.Status != http.StatusOK {
		return 0, 0, fmt.Errorf("dispatch limit: %v %s", err, r.Body)
	}
	for sent := 0; sent < n; sent += 500 {
		if err := post(ctx, key, "POST", "/v1/notifications/bulk", bulkBody(min(500, n-sent), sent), http.StatusCreated); err != nil {
			return 0, 0, err
		}
	}
	start := time.Now()
	for range workers {
		if _, err := b.daemon(ctx, url, "worker"); err != nil {
			return 0, 0, err
		}
	}
	var at []time.Time
	for {
		at = arrivals(sim)
		if len(at) >= n {
			break
		}
		if time.Since(start) > 10*time.Minute {
			return 0, 0, fmt.Errorf("only %d of %d delivered", len(at), n)
		}
		time.Sleep(200 * time.Millisecond)
	}
	from := 0
	for from < len(at) && at[from].Sub(at[0]) < 2*time.Second {
		from++
	}
	if os.Getenv("BENCH_VERBOSE") != "" {
		fmt.Println("per second:", perSecond(at))
	}
	tail := at[from:]
	steady = float64(len(tail)-1) / tail[len(tail)-1].Sub(tail[0]).Seconds()
	overall = float64(n) / at[len(at)-1].Sub(start).Seconds()
	b.cleanup() // stop this phase's processes before the next
	return steady, overall, nil
}

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

func arrivals(sim *simulator.Simulator) []time.Time {
	ms := sim.Messages("", "", 0)
	at := make([]time.Time, len(ms))
	for i, m := range ms {
		at[i] = m.ReceivedAt
	}
	sort.Slice(at, func(i, j int) bool { return at[i].Before(at[j]) })
	return at
}
