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
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return runUntil(ctx, name, conns, op)
}

// runUntil calls op from conns goroutines until ctx ends.
func runUntil(ctx context.Context, name string, conns int, op func(ctx context.Context, worker int) error) result {
	var ok, fail atomic.Int64
	lats := make([][]time.Duration, conns)
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < conns; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				t := time.Now()
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
