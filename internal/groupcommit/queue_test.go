package groupcommit

import (
	"sync"
	"sync/atomic"
	"testing"
)

// TestQueue: every item runs exactly once, batches never exceed max, no
// more than writers batches run at once, and items that arrive while a
// batch runs gather into the next one.
func TestQueue(t *testing.T) {
	const writers, batchMax, n = 2, 8, 400
	var running, peak atomic.Int32
	var mu sync.Mutex
	seen := map[int]int{}
	largest := 0
	release := make(chan struct{})
	var done sync.WaitGroup
	done.Add(n)
	q := New(writers, batchMax, func(batch []int) {
		r := running.Add(1)
		for {
			p := peak.Load()
			if r <= p || peak.CompareAndSwap(p, r) {
				break
			}
		}
		<-release
		mu.Lock()
		largest = max(largest, len(batch))
		for _, v := range batch {
			seen[v]++
		}
		mu.Unlock()
		running.Add(-1)
		for range batch {
			done.Done()
		}
	})
	for i := range n {
		q.Add(i)
	}
	close(release)
	done.Wait()
	if len(seen) != n {
		t.Fatalf("ran %d distinct items, want %d", len(seen), n)
	}
	for v, c := range seen {
		if c != 1 {
			t.Fatalf("item %d ran %d times", v, c)
		}
	}
	if largest != batchMax {
		t.Fatalf("largest batch %d, want %d (items added while batches were held must gather)", largest, batchMax)
	}
	if p := peak.Load(); p > writers {
		t.Fatalf("%d batches ran at once, want at most %d", p, writers)
	}
}
