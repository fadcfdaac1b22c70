package sqlstore

import (
	"context"
	"sync"
	"time"
)

// sharedRead lets the calls for one key that wait at the same moment
// share one read. A call joins the next read to start, never one already
// running, so what it gets was read after it was made: as fresh as a read
// of its own, and as exact for the caches that check a version with it.
// Under load the sends by recipient id of one workspace thus check its
// versions with one statement for several sends (issue 32's serve
// target), while a lone send still reads at once.
type sharedRead[K comparable, V any] struct {
	batchRead[K, struct{}, V]
}

// do answers read's value for k, read after do was called; the caller
// that finds no read running runs it, the others wait for it.
func (s *sharedRead[K, V]) do(ctx context.Context, k K, read func(context.Context) (V, error)) (V, error) {
	return s.batchRead.do(ctx, k, struct{}{}, func(ctx context.Context, _ []struct{}) (V, error) { return read(ctx) })
}

// batchRead is sharedRead for reads that each caller adds to: a call
// brings an argument (a profile's external id), and the read that the
// calls waiting at the same moment share gets all of theirs (the profiles
// of several sends in one statement). The same rule holds: a call joins
// the next read to start, so its answer was read after it was made.
type batchRead[K comparable, A any, V any] struct {
	mu sync.Mutex
	m  map[K]*readSlot[A, V]
}

// readSlot is one key's state: whether a read runs, and the call the
// callers that came during it wait for.
type readSlot[A any, V any] struct {
	running bool
	next    *readCall[A, V]
}

type readCall[A any, V any] struct {
	done chan struct{}
	args []A
	v    V
	err  error
}

// sharedReadTimeout bounds a read. A read serves several callers, so the
// one that runs it cannot cancel it for the others: it runs without the
// caller's cancellation, within this bound.
const sharedReadTimeout = 10 * time.Second

// do answers read's value for k with arg among its arguments, read after
// do was called; the caller that finds no read running runs it, the
// others wait for it.
func (s *batchRead[K, A, V]) do(ctx context.Context, k K, arg A, read func(context.Context, []A) (V, error)) (V, error) {
	s.mu.Lock()
	if s.m == nil {
		s.m = map[K]*readSlot[A, V]{}
	}
	slot := s.m[k]
	if slot == nil {
		slot = &readSlot[A, V]{}
		s.m[k] = slot
	}
	if slot.next == nil {
		slot.next = &readCall[A, V]{done: make(chan struct{})}
	}
	c := slot.next
	c.args = append(c.args, arg)
	lead := !slot.running
	if lead {
		slot.running, slot.next = true, nil
	}
	s.mu.Unlock()
	if lead {
		s.run(ctx, k, slot, c, read)
		return c.v, c.err
	}
	select {
	case <-c.done:
		return c.v, c.err
	case <-ctx.Done():
		var zero V
		return zero, ctx.Err()
	}
}

// run reads for c, then starts the read the callers that came meanwhile
// wait for, if any (in its own goroutine: c's caller goes on at once).
func (s *batchRead[K, A, V]) run(ctx context.Context, k K, slot *readSlot[A, V], c *readCall[A, V], read func(context.Context, []A) (V, error)) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sharedReadTimeout)
	c.v, c.err = read(rctx, c.args)
	cancel()
	close(c.done)
	s.mu.Lock()
	next := slot.next
	slot.next = nil
	if next == nil {
		slot.running = false
		delete(s.m, k)
	}
	s.mu.Unlock()
	if next != nil {
		go s.run(ctx, k, slot, next, read)
	}
}
