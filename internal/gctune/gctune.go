// Package gctune keeps serve's soft memory limit from sitting below the
// live heap. A fixed limit under the live heap makes the collector run
// back to back (the runtime caps it at about half the CPU): with 96 MiB
// and a live heap of 85–117 MB, 100,000 workflow delays and a tracked
// campaign on PostgreSQL spent 52–62% of the server's CPU collecting
// (docs/BENCHMARKS.md, session 20). Following the live heap, the limit
// is the floor while the heap is small, as before, and twice the live
// heap when that is more: then a collection comes every live heap's
// worth of allocation, the cost of Go's default GOGC=100.
package gctune

import (
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// Headroom is how many times the live heap the limit allows at least.
const Headroom = 2

// Interval is how often Follow reads the live heap: a tenth of a second
// is a few collections of a loaded serve, and a read costs microseconds.
const Interval = 100 * time.Millisecond

// LimitFor is the soft limit for a live heap of live bytes: floor, or
// Headroom times live when that is more.
func LimitFor(live uint64, floor int64) int64 {
	if l := int64(live) * Headroom; live < 1<<60 && l > floor {
		return l
	}
	return floor
}

// Follower moves the limit after the live heap.
type Follower struct {
	Floor int64
	// Live reads the live heap (runtime/metrics when nil); SetLimit sets
	// the soft limit (debug.SetMemoryLimit when nil).
	Live     func() uint64
	SetLimit func(int64) int64
	current  int64
}

// Step reads the live heap once and sets the limit when it should move by
// more than a sixteenth, so a steady heap leaves it alone. It returns the
// limit in force.
func (f *Follower) Step() int64 {
	if f.Live == nil {
		f.Live = liveHeap()
	}
	if f.SetLimit == nil {
		f.SetLimit = debug.SetMemoryLimit
	}
	want := LimitFor(f.Live(), f.Floor)
	if f.current == 0 || diff(want, f.current) > f.current/16 {
		f.SetLimit(want)
		f.current = want
	}
	return f.current
}

// Follow sets the limit to floor and then follows the live heap for the
// life of the process.
func Follow(floor int64) {
	f := &Follower{Floor: floor}
	f.Step()
	for range time.Tick(Interval) {
		f.Step()
	}
}

func diff(a, b int64) int64 {
	if a > b {
		return a - b
	}
	return b - a
}

// liveHeap reads the heap the last collection found live.
func liveHeap() func() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	return func() uint64 {
		metrics.Read(s)
		if s[0].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return s[0].Value.Uint64()
	}
}
