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

func (c *batchCall) Context() context.Context { return c.ctx }
func (c *batchCall) Answer(err error)         { c.done <- err }

// batcher runs the calls of one group commit in one transaction; its
// queue gathers them (at most the backend's writers batches at once).
type batcher struct {
	s *Store
	q *groupcommit.Queue[*batchCall]
	// urgent: the batch's transaction goes before waiting background
	// writers (UpdateUrgent's rank).
	urgent bool
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
	return groupcommit.Wait(ctx, s.batch.q, c, c.done)
}

// BatchUrgent is Batch whose shared transaction ranks as UpdateUrgent's.
// Its group commit is the backend's UrgentWriters when it says (on
// PostgreSQL, where Batch has none, the delivery reports' own).
func (s *Store) BatchUrgent(ctx context.Context, fn func(notify.Tx) error) error {
	if s.urgentWriters == 0 {
		return s.UpdateUrgent(ctx, fn)
	}
	c := &batchCall{ctx: ctx, fn: fn, done: make(chan error, 1)}
	return groupcommit.Wait(ctx, s.urgentBatch.q, c, c.done)
}

func (b *batcher) run(calls []*batchCall) {
	ctx := context.Background()
	if u, ok := b.s.b.(Urgent); ok && b.urgent {
		ctx = u.Urgent(ctx)
	}
	live := groupcommit.Live(calls)
	if len(live) == 0 {
		return
	}
	conn, err := b.s.b.Begin(ctx, true)
	if err != nil {
		groupcommit.Fail(live, fmt.Errorf("begin: %w", err))
		return
	}
	errs := make([]error, len(live))
	tx := b.s.newTx(conn)
	// On a backend that runs several statements in one Exec, a call's
	// release goes with the next call's savepoint: one round trip less a
	// call (PostgreSQL; the savepoint stack stays one deep).
	joined := multiStatement(conn)
	released := true
	for i, c := range live {
		if len(live) == 1 {
			errs[i] = safeCall(c.fn, tx)
			continue
		}
		if !released {
			if _, err := conn.Exec(ctx, `RELEASE SAVEPOINT batch_call; SAVEPOINT batch_call`); err != nil {
				_ = conn.Rollback(ctx)
				groupcommit.Fail(live, fmt.Errorf("release savepoint: %w", err))
				return
			}
		} else if _, err := conn.Exec(ctx, `SAVEPOINT batch_call`); err != nil {
			errs[i] = err
			continue
		}
		released = false
		mark := len(tx.pending)
		if errs[i] = safeCall(c.fn, tx); errs[i] != nil {
			tx.pending = tx.pending[:mark] // its jobs go with its writes
			if _, err := conn.Exec(ctx, `ROLLBACK TO SAVEPOINT batch_call`); err != nil {
				_ = conn.Rollback(ctx)
				groupcommit.Fail(live, fmt.Errorf("rollback to savepoint: %w", err))
				return
			}
		}
		if joined && i < len(live)-1 {
			continue // released with the next call's savepoint
		}
		if _, err := conn.Exec(ctx, `RELEASE SAVEPOINT batch_call`); err != nil {
			_ = conn.Rollback(ctx)
			groupcommit.Fail(live, fmt.Errorf("release savepoint: %w", err))
			return
		}
		released = true
	}
	if len(live) == 1 && errs[0] != nil {
		_ = conn.Rollback(ctx)
		live[0].done <- errs[0]
		return
	}
	if err := tx.flush(ctx); err != nil {
		_ = conn.Rollback(ctx)
		groupcommit.Fail(live, fmt.Errorf("insert queue jobs: %w", err))
		return
	}
	if err := b.s.wakeTx(ctx, tx); err != nil {
		_ = conn.Rollback(ctx)
		groupcommit.Fail(live, err)
		return
	}
	if err := conn.Commit(ctx); err != nil {
		groupcommit.Fail(live, fmt.Errorf("commit: %w", err))
		return
	}
	b.s.woke(tx)
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

// multiStatement says whether c runs several statements (without
// arguments) in one Exec.
func multiStatement(c Conn) bool {
	m, ok := c.(interface{ MultiStatement() bool })
	return ok && m.MultiStatement()
}
