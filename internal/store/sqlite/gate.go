package sqlite

import (
	"context"
	"sync"

	"github.com/notifyd/notifyd/internal/notify"
)

// gate orders the writers of the one write connection. database/sql
// hands its only connection to a random waiter; here a caller answering
// a client (the send group commit, Urgent) goes before the background
// writers (delivery runs) that wait with it, so a long queue of delivery
// transactions does not add to acceptance latency. Writers of equal rank
// go in arrival order; after maxUrgentRun urgent writers in a row a
// waiting background writer goes, so delivery never starves under a
// flood of sends. River's own statements do not pass the gate.
type gate struct {
	mu        sync.Mutex
	busy      bool
	high, low []chan struct{}
	urgentRun int // urgent writers in a row while background ones waited
	// bulk holds the writers of bulk work (a campaign's delivery runs,
	// notify.LaneOf): they go when no other writer waits, or after
	// maxAheadOfBulk others went ahead of the first of them, so a
	// campaign's claims never delay a password reset's (issue 31).
	bulk      []chan struct{}
	aheadBulk int
}

// maxAheadOfBulk is how many other writers may go ahead of a waiting bulk
// writer: a transactional claim jumps the queue of a campaign's claims,
// while the campaign's own outcome and fan-out writes (background rank)
// do not starve its claims.
const maxAheadOfBulk = 2

// maxUrgentRun is how many urgent writers may go in a row ahead of a
// waiting background writer.
const maxUrgentRun = 1

type urgentKey struct{}

// Urgent marks ctx's write transactions as urgent.
func (b *Backend) Urgent(ctx context.Context) context.Context {
	return context.WithValue(ctx, urgentKey{}, true)
}

func (g *gate) acquire(ctx context.Context) error {
	g.mu.Lock()
	if !g.busy {
		g.busy = true
		g.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	urgent, _ := ctx.Value(urgentKey{}).(bool)
	switch {
	case urgent:
		g.high = append(g.high, ch)
	case notify.LaneOf(ctx) == notify.LaneBulk:
		g.bulk = append(g.bulk, ch)
	default:
		g.low = append(g.low, ch)
	}
	g.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.drop(ch) {
			return ctx.Err()
		}
		// Handed over meanwhile: pass it on.
		g.handOff()
		return ctx.Err()
	}
}

// drop removes ch from the waiters; false when it was already handed the
// gate.
func (g *gate) drop(ch chan struct{}) bool {
	for _, q := range []*[]chan struct{}{&g.high, &g.low, &g.bulk} {
		for i, c := range *q {
			if c == ch {
				*q = append((*q)[:i], (*q)[i+1:]...)
				return true
			}
		}
	}
	return false
}

func (g *gate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.handOff()
}

// handOff gives the gate to the next waiter, urgent ones first; g.mu is
// held.
func (g *gate) handOff() {
	if len(g.bulk) > 0 && (len(g.high)+len(g.low) == 0 || g.aheadBulk >= maxAheadOfBulk) {
		ch := g.bulk[0]
		g.bulk = g.bulk[1:]
		g.aheadBulk = 0
		close(ch)
		return
	}
	if len(g.bulk) > 0 {
		g.aheadBulk++
	}
	switch {
	case len(g.high) > 0 && (len(g.low) == 0 || g.urgentRun < maxUrgentRun):
		ch := g.high[0]
		g.high = g.high[1:]
		if len(g.low) > 0 {
			g.urgentRun++
		}
		close(ch)
	case len(g.low) > 0:
		ch := g.low[0]
		g.low = g.low[1:]
		g.urgentRun = 0
		close(ch)
	default:
		g.busy = false
	}
}
