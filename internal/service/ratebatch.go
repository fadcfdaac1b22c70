package service

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
)

// maxRateBatch bounds the checks of one transaction.
const maxRateBatch = 256

// rateChecks is group commit for request-limit checks. Checking one
// request alone costs a transaction that holds its workspace's counter row
// from the first statement to the commit, and every request of the
// workspace waits for that lock in turn (on PostgreSQL this capped a busy
// workspace at a few hundred requests per second). Here one loop takes the
// checks waiting, runs them in one transaction, and answers each after the
// commit; while it runs, new checks queue for the next batch.
type rateChecks struct {
	s       *Service
	mu      sync.Mutex
	pending []*rateCheck
	running bool
}

// rateCheck is one request waiting for its answer.
type rateCheck struct {
	ctx  context.Context
	key  *notify.APIKey
	now  time.Time
	done chan error
}

func (b *rateChecks) check(ctx context.Context, key *notify.APIKey, now time.Time) error {
	c := &rateCheck{ctx: ctx, key: key, now: now, done: make(chan error, 1)}
	b.mu.Lock()
	b.pending = append(b.pending, c)
	if !b.running {
		b.running = true
		go b.loop()
	}
	b.mu.Unlock()
	select {
	case err := <-c.done:
		return err
	case <-ctx.Done():
		// The check may still count; the caller has given up on the answer.
		return ctx.Err()
	}
}

func (b *rateChecks) loop() {
	for {
		b.mu.Lock()
		n := min(len(b.pending), maxRateBatch)
		if n == 0 {
			b.running = false
			b.mu.Unlock()
			return
		}
		batch := b.pending[:n:n]
		b.pending = append([]*rateCheck(nil), b.pending[n:]...)
		b.mu.Unlock()
		b.run(batch)
	}
}

// rateCounter is one counter window touched by a batch.
type rateCounter struct {
	scope string
	start time.Time
	max   int
	count int
	dirty bool
}

func (b *rateChecks) run(batch []*rateCheck) {
	live := batch[:0:0]
	for _, c := range batch {
		if c.ctx.Err() != nil {
			c.done <- c.ctx.Err()
			continue
		}
		live = append(live, c)
	}
	if len(live) == 0 {
		return
	}
	errs := make([]error, len(live))
	ctx := context.Background()
	// Batch: on SQLite the checks also share the sends' group commit.
	err := b.s.store.Batch(ctx, func(tx notify.Tx) error {
		clear(errs)
		counters := map[string]*rateCounter{}
		// counter returns the window of scope with its maximum.
		counter := func(scope string, windowSeconds, max int, now time.Time) *rateCounter {
			key, start := rateWindow(scope, windowSeconds, now)
			id := key + "@" + start.String()
			c := counters[id]
			if c == nil {
				c = &rateCounter{scope: key, start: start, max: max}
				counters[id] = c
			}
			return c
		}
		// policy reads each policy once per batch.
		type limit struct{ window, max int }
		policies := map[[2]string]limit{}
		policy := func(workspaceID, keyID string, defMax int) (limit, error) {
			id := [2]string{workspaceID, keyID}
			if l, ok := policies[id]; ok {
				return l, nil
			}
			w, m, err := ratePolicy(ctx, tx, workspaceID, keyID, defMax)
			policies[id] = limit{w, m}
			return policies[id], err
		}
		type pair struct{ ws, key *rateCounter }
		pairs := make([]pair, len(live))
		for i, c := range live {
			ws, err := policy(c.key.WorkspaceID, "", notify.DefaultWorkspaceMaxRequests)
			if err != nil {
				return err
			}
			k, err := policy(c.key.WorkspaceID, c.key.ID, notify.DefaultAPIKeyMaxRequests)
			if err != nil {
				return err
			}
			pairs[i] = pair{counter("w:"+c.key.WorkspaceID, ws.window, ws.max, c.now), counter("k:"+c.key.ID, k.window, k.max, c.now)}
		}
		// Lock in one global order, so batches of several processes
		// never wait on each other in a cycle.
		ids := make([]string, 0, len(counters))
		for id := range counters {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		for _, id := range ids {
			c := counters[id]
			n, err := tx.LockRateCount(ctx, c.scope, c.start)
			if err != nil {
				return err
			}
			c.count = n
		}
		// Arrival order: the workspace first, then the key; a refused
		// request grows neither.
		for i, p := range pairs {
			switch {
			case p.ws.count >= p.ws.max:
				errs[i] = notify.Errorf(notify.CodeWorkspaceLimit, "Workspace request limit exceeded")
			case p.key.count >= p.key.max:
				errs[i] = notify.Errorf(notify.CodeAPIKeyLimit, "API key request limit exceeded")
			default:
				p.ws.count++
				p.key.count++
				p.ws.dirty, p.key.dirty = true, true
			}
		}
		for _, id := range ids {
			if c := counters[id]; c.dirty {
				if err := tx.SetRateCount(ctx, c.scope, c.start, c.count); err != nil {
					return err
				}
			}
		}
		return nil
	})
	for i, c := range live {
		if err != nil {
			c.done <- err
			continue
		}
		c.done <- errs[i]
	}
}
