package main

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// result is one load phase's throughput and latency.
type result struct {
	name     string
	ok, fail int64
	elapsed  time.Duration
	lat      []time.Duration
}

func (r result) rate() float64 { return float64(r.ok) / r.elapsed.Seconds() }

func (r result) pct(p float64) time.Duration {
	if len(r.lat) == 0 {
		return 0
	}
	return r.lat[int(float64(len(r.lat)-1)*p)]
}

func (r result) String() string {
	return fmt.Sprintf("%-44s %9.0f/s  p50 %6.2f ms  p99 %6.2f ms  (ok %d, failed %d)", r.name, r.rate(),
		float64(r.pct(0.50).Microseconds())/1000, float64(r.pct(0.99).Microseconds())/1000, r.ok, r.fail)
}

// run calls op from conns goroutines for d and collects latencies.
func run(name string, conns int, d time.Duration, op func(ctx context.Context, worker int) error) result {
	return load(name, conns, 0, d, op)
}

// runPaced calls op at rate a second in all, from conns goroutines each
// keeping its own pace, for d: the latency of a send at a load the server
// carries, where run's latency at saturation is mostly the queue of its
// callers. A caller that falls behind its pace starts its next call at
// once rather than making the calls up.
func runPaced(name string, conns, rate int, d time.Duration, op func(ctx context.Context, worker int) error) result {
	return load(name, conns, time.Duration(float64(time.Second)*float64(conns)/float64(max(rate, 1))), d, op)
}

// load calls op from conns goroutines for d, each starting a call every
// interval at most (0: as soon as the last answered), and collects
// latencies.
func load(name string, conns int, interval, d time.Duration, op func(ctx context.Context, worker int) error) result {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return loadUntil(ctx, name, conns, interval, op)
}

// runUntil calls op from conns goroutines until ctx ends.
func runUntil(ctx context.Context, name string, conns int, op func(ctx context.Context, worker int) error) result {
	return loadUntil(ctx, name, conns, 0, op)
}

// loadUntil is load until ctx ends.
func loadUntil(ctx context.Context, name string, conns int, interval time.Duration, op func(ctx context.Context, worker int) error) result {
	var ok, fail atomic.Int64
	lats := make([][]time.Duration, conns)
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < conns; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Paced callers spread their first calls over one interval.
			next := start.Add(interval * time.Duration(w) / time.Duration(conns))
			for {
				if wait := time.Until(next); wait > 0 {
					select {
					case <-ctx.Done():
						return
					case <-time.After(wait):
					}
				}
				if ctx.Err() != nil {
					return
				}
				t := time.Now()
				next = t.Add(interval)
				if err := op(context.Background(), w); err != nil {
					fail.Add(1)
					continue
				}
				lats[w] = append(lats[w], time.Since(t))
				ok.Add(1)
			}
		}()
	}
	wg.Wait()
	r := result{name: name, ok: ok.Load(), fail: fail.Load(), elapsed: time.Since(start)}
	for _, l := range lats {
		r.lat = append(r.lat, l...)
	}
	sort.Slice(r.lat, func(i, j int) bool { return r.lat[i] < r.lat[j] })
	return r
}

func httpClient(conns int) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost = conns*2, conns*2
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

func ratio(name string, ours, base float64) {
	fmt.Printf("%-44s %8.2f  (%.0f / %.0f)\n", "ratio "+name, ours/base, ours, base)
}
