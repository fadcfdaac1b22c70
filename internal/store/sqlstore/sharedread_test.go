package sqlstore

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Every caller gets a value read after it called, and callers that wait
// together share reads.
func TestSharedReadIsFreshAndShared(t *testing.T) {
	var s sharedRead[string, int64]
	var reads atomic.Int64
	read := func(context.Context) (int64, error) {
		n := reads.Add(1) // the read's number, taken as it starts
		time.Sleep(2 * time.Millisecond)
		return n, nil
	}
	const callers, rounds = 32, 20
	var wg sync.WaitGroup
	var stale atomic.Int64
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				before := reads.Load()
				got, err := s.do(context.Background(), "ws", read)
				if err != nil || got <= before {
					stale.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if stale.Load() != 0 {
		t.Fatalf("%d calls got a value read before they called", stale.Load())
	}
	if n := reads.Load(); n >= callers*rounds/2 {
		t.Fatalf("%d reads for %d calls: callers waiting together did not share", n, callers*rounds)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.m) != 0 {
		t.Fatalf("%d keys left after the reads ended", len(s.m))
	}
}

// A read's error reaches the callers that shared it; the next call reads
// again.
func TestSharedReadError(t *testing.T) {
	var s sharedRead[string, int]
	boom := errors.New("boom")
	if _, err := s.do(context.Background(), "ws", func(context.Context) (int, error) { return 0, boom }); !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	v, err := s.do(context.Background(), "ws", func(context.Context) (int, error) { return 7, nil })
	if err != nil || v != 7 {
		t.Fatalf("after an error: %d, %v", v, err)
	}
}
