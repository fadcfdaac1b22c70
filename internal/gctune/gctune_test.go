package gctune

import (
	"runtime"
	"testing"
)

func TestLimitFor(t *testing.T) {
	const floor = 96 << 20
	for _, c := range []struct {
		live uint64
		want int64
	}{
		{0, floor},
		{30 << 20, floor},
		{48 << 20, floor},
		{60 << 20, 120 << 20},
		{117 << 20, 234 << 20},
		{1 << 62, floor}, // an absurd reading never overflows into a tiny limit
	} {
		if got := LimitFor(c.live, floor); got != c.want {
			t.Errorf("LimitFor(%d) = %d, want %d", c.live, got, c.want)
		}
	}
}

// TestFollowerMoves: the limit follows a growing and a shrinking live
// heap, and a small change leaves it alone.
func TestFollowerMoves(t *testing.T) {
	var live uint64 = 10 << 20
	var sets []int64
	f := &Follower{Floor: 96 << 20, Live: func() uint64 { return live },
		SetLimit: func(l int64) int64 { sets = append(sets, l); return 0 }}
	steps := []struct {
		live uint64
		want int64
		sets int
	}{
		{10 << 20, 96 << 20, 1},   // the floor, set once
		{40 << 20, 96 << 20, 1},   // still the floor: not set again
		{100 << 20, 200 << 20, 2}, // above the floor: twice the live heap
		{103 << 20, 200 << 20, 2}, // within a sixteenth: left alone
		{150 << 20, 300 << 20, 3},
		{20 << 20, 96 << 20, 4}, // the heap shrank: back to the floor
	}
	for i, s := range steps {
		live = s.live
		if got := f.Step(); got != s.want || len(sets) != s.sets {
			t.Fatalf("step %d: limit %d after %d sets, want %d after %d", i, got, len(sets), s.want, s.sets)
		}
	}
}

// TestLiveHeapReads: the runtime's live-heap metric is read (a zero
// would leave the limit at its floor whatever the heap).
func TestLiveHeapReads(t *testing.T) {
	keep := make([][]byte, 64)
	for i := range keep {
		keep[i] = make([]byte, 1<<20)
	}
	runtime.GC()
	if got := liveHeap()(); got < 64<<20 {
		t.Fatalf("live heap %d bytes, want at least the 64 MiB kept", got)
	}
	runtime.KeepAlive(keep)
}
