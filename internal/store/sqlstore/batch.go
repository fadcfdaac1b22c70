package sqlstore

import (
	"context"
	"fmt"

	"github.com/notifyd/notifyd/internal/groupcommit"
	"github.com/notifyd/notifyd/internal/notify"
)

// maxBatch bounds how many callers share one transaction: enough to
// amortize the commit, small enough to keep the latency of the last one low.
const maxBatch = 128

// batchCall is one caller waiting for its function to be committed.
type batchCall struct {
	ctx  context.Context
	fn   func(notify.Tx) error
	done chan error
}

// batcher runs the calls of one group commit in one transaction; its
// queue gathers them (at most the backend's writers batches at once).
type batcher struct {
	s *Store
	q *groupcommit.Queue[*batchCall]
}

// Batch runs fn in a write transaction that it may share with concurrent
// callers (group commit). Each fn runs inside its own savepoint: an error
// rolls back only that fn's writes and is returned to its caller alone.
// fn must not rely on being the only writer of its transaction.
func (s *Store) Batch(ctx context.Context, fn func(notify.Tx) error) error {
	if s.writers == 0 {
		return s.Update(ctx, fn)
	}
	c := &batchCall{ctx: ctx, fn: fn, done: make(chan error, 1)}
	s.batch.q.Add(c)
	select {
	case err := <-c.done:
		return err
	case <-ctx.Done():
		// The call may still commit; the caller has given up on the answer.
		return ctx.Err()
	}
}

func (b *batcher) run(calls []*batchCall) {
	ctx := context.Background()
	live := calls[:0:0]
	for _, c := range calls {
		if c.ctx.Err() != nil {
			c.done <- c.ctx.Err()
			continue
		}
		live = append(live, c)
	}
	if len(live) == 0 {
		return
	}
	conn, err := b.s.b.Begin(ctx, true)
	if err != nil {
		fail(live, fmt.Errorf("begin: %w", err))
		return
	}
	errs := make([]error, len(live))
	tx := &Tx{c: conn}
	for i, c := range live {
		if len(live) == 1 {
			errs[i] = safeCall(c.fn, tx)
			continue
		}
		if _, err := conn.Exec(ctx, `SAVEPOINT batch_call`); err != nil {
			errs[i] = err
			continue
		}
		mark := len(tx.pending)
		if errs[i] = safeCall(c.fn, tx); errs[i] != nil {
			tx.pending = tx.pending[:mark] // its jobs go with its writes
			if _, err := conn.Exec(ctx, `ROLLBACK TO SAVEPOINT batch_call`); err != nil {
				_ = conn.Rollback(ctx)
				fail(live, fmt.Errorf("rollback to savepoint: %w", err))
				return
			}
		}
		if _, err := conn.Exec(ctx, `RELEASE SAVEPOINT batch_call`); err != nil {
			_ = conn.Rollback(ctx)
			fail(live, fmt.Errorf("release savepoint: %w", err))
			return
		}
	}
	if len(live) == 1 && errs[0] != nil {
		_ = conn.Rollback(ctx)
		live[0].done <- errs[0]
		return
	}
	if err := tx.flush(ctx); err != nil {
		_ = conn.Rollback(ctx)
		fail(live, fmt.Errorf("insert queue jobs: %w", err))
		return
	}
	if err := conn.Commit(ctx); err != nil {
		fail(live, fmt.Errorf("commit: %w", err))
		return
	}
	for i, c := range live {
		c.done <- errs[i]
	}
}

// safeCall turns a panic in fn into an error so one caller cannot take
// down the batch of others.
func safeCall(fn func(notify.Tx) error, tx *Tx) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic in batched transaction: %v", p)
		}
	}()
	return fn(tx)
}

func fail(calls []*batchCall, err error) {
	for _, c := range calls {
		c.done <- err
	}
}
