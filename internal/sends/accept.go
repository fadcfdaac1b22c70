package sends

import (
	"context"
	"errors"
	"time"

	"github.com/notifyd/notifyd/internal/gate"
	"github.com/notifyd/notifyd/internal/groupcommit"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/tracing"
	"github.com/notifyd/notifyd/internal/usecase"
)

// The send group commit. Every signed send (and bulk send) is checked and
// rendered outside any transaction; then concurrent sends share one
// transaction that confirms their cached API keys, records their nonces,
// applies the request limits, and writes their requests, job rows and
// queue jobs with multi-row statements. Each caller is answered after the
// commit. There is no fixed delay: while one batch commits, the next one
// gathers, so batches grow with load and a lone send never waits.

// maxAcceptBatch bounds the sends of one transaction.
const maxAcceptBatch = 256

// acceptCall is one send waiting for its group commit.
type acceptCall struct {
	gate.Call // key, nonce, and the answer (Err)
	ctx       context.Context
	// accepts are the requests to accept; refuse, when set instead, is the
	// 4xx found before the commit (a body that did not decode or
	// validate): the call still counts toward the limits and records its
	// nonce, and answers refuse unless a limit answers 429 first.
	accepts []*notify.Accept
	refuse  error
	// write, when set, runs the caller's own writes in the transaction
	// before the requests are written, and may leave some out (CommitWith).
	write func(ctx context.Context, tx notify.Tx) error
	// settle, when the write sets it, runs after every call's write and
	// the transaction's shared work, and sets accepts.
	settle func()
	done   chan struct{}
}

// acceptor runs the send group commit.
type acceptor struct {
	s *Service
	q *groupcommit.Queue[*acceptCall]
}

// newAcceptor runs up to writers batches at once: 1 on SQLite (one
// writer); more were slower on PostgreSQL too (docs/BENCHMARKS.md).
func newAcceptor(s *Service, writers int) *acceptor {
	a := &acceptor{s: s}
	a.q = groupcommit.New(max(writers, 1), maxAcceptBatch, a.run)
	a.q.Trace(s.tracer, "groupcommit accept")
	return a
}

// do queues c for the next batch and waits for its answer.
func (a *acceptor) do(c *acceptCall) error {
	c.done = make(chan struct{})
	if a.s.tracer.On() {
		// The dispatch job carries the acceptance's trace across the
		// queue, so the delivery continues it.
		tp := tracing.Parent(c.ctx)
		for _, acc := range c.accepts {
			acc.TraceParent = tp
		}
	}
	a.q.Add(c)
	select {
	case <-c.done:
		return c.Err
	case <-c.ctx.Done():
		// The call may still commit; the caller has given up on the answer.
		return c.ctx.Err()
	}
}

func (c *acceptCall) Context() context.Context { return c.ctx }

// Answer gives the call its answer (nil: accepted).
func (c *acceptCall) Answer(err error) {
	c.Err = err
	close(c.done)
}

func (a *acceptor) run(calls []*acceptCall) {
	live := groupcommit.Live(calls)
	if len(live) == 0 {
		return
	}
	ctx := context.Background()
	err := a.commit(ctx, live, false)
	if errors.Is(err, gate.ErrRateRace) {
		// Another process admitted requests between this batch's read of
		// the counters and its additions: run it again holding them.
		err = a.commit(ctx, live, true)
	}
	if err != nil && len(live) > 1 {
		// One call must not fail the others (a value the database
		// refuses): each runs alone.
		for _, c := range live {
			if err := a.commit(ctx, []*acceptCall{c}, true); err != nil {
				c.Err = err
			}
			close(c.done)
		}
		return
	}
	// After a commit each call holds its own answer (nil when accepted).
	for _, c := range live {
		if err != nil {
			c.Err = err
		}
		close(c.done)
	}
}

// commit runs one batch transaction; lock reads the limit counters under
// their locks (after a race, or for a lone retried call).
func (a *acceptor) commit(ctx context.Context, calls []*acceptCall, lock bool) error {
	s := a.s
	now := s.Now()
	var adm *gate.Admission
	err := s.Store.UpdateUrgent(ctx, func(tx notify.Tx) error {
		gcs := make([]*gate.Call, 0, len(calls))
		for _, c := range calls {
			c.Err = nil
			for _, acc := range c.accepts {
				acc.Existing, acc.ExistingJob, acc.Job = nil, nil, nil
			}
			// A call without a key (an inbound hook's) has passed its own
			// door and does not go through the signed API's.
			if c.Key != nil {
				gcs = append(gcs, &c.Call)
			}
		}
		var err error
		if adm, err = s.gate.Admit(ctx, tx, gcs, now, lock); err != nil {
			return err
		}
		// The calls' own writes share what they leave for after them all
		// (usecase.TxShare); then each call settles which of its requests
		// to write.
		share := &usecase.TxShare{}
		wctx := usecase.WithTxShare(ctx, share)
		var written []*acceptCall
		for _, c := range calls {
			if c.Err != nil {
				continue
			}
			if c.refuse != nil {
				c.Err = c.refuse
				continue
			}
			if c.write != nil {
				if err := c.write(wctx, tx); err != nil {
					return err
				}
			}
			written = append(written, c)
		}
		if err := share.Flush(ctx, tx); err != nil {
			return err
		}
		var accepts []*notify.Accept
		for _, c := range written {
			if c.settle != nil {
				c.settle()
			}
			accepts = append(accepts, c.accepts...)
		}
		if err := holdInboxes(ctx, tx, accepts); err != nil {
			return err
		}
		if err := tx.AcceptRequests(ctx, accepts, now); err != nil {
			return err
		}
		if err := finalEvents(ctx, tx, accepts, now); err != nil {
			return err
		}
		return adm.Finish(ctx, tx)
	})
	if err == nil {
		adm.Committed()
	}
	return err
}

// holdInboxes keeps the profiles of the inapp sends delivered at
// acceptance from being erased until the commit. One erased since the
// send was built has no inbox: its send goes to the engine as any other
// (queued), which fails it as it fails a profile erased before dispatch.
func holdInboxes(ctx context.Context, tx notify.Tx, accepts []*notify.Accept) error {
	var ids []string
	for _, a := range accepts {
		if a.Request.InboxAtAcceptance != "" {
			ids = append(ids, a.Request.InboxAtAcceptance)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	held, err := tx.HoldRecipientRows(ctx, ids)
	if err != nil {
		return err
	}
	for _, a := range accepts {
		r := a.Request
		if r.InboxAtAcceptance != "" && held[r.InboxAtAcceptance] != r.WorkspaceID {
			r.Status, r.InboxAtAcceptance, a.Final = notify.StatusQueued, "", false
		}
	}
	return nil
}

// finalEvents writes what the requests accepted in a final state need in
// the acceptance's transaction, as every state change writes its event:
// canceled (stopped by preferences at acceptance), or sent with the
// message stored in the inbox (an inapp send delivered at acceptance).
func finalEvents(ctx context.Context, tx notify.Tx, accepts []*notify.Accept, now time.Time) error {
	var events []*notify.Event
	var inbox []*notify.InboxMessage
	for _, a := range accepts {
		if a.Existing != nil || !a.Final {
			continue
		}
		typ := notify.EventCanceled
		if r := a.Request; r.InboxAtAcceptance != "" {
			typ = notify.EventDelivered
			inbox = append(inbox, notify.InboxMessageOf(r, usecase.NewID(), r.InboxAtAcceptance, now))
		}
		events = append(events, notify.RequestEvent(usecase.NewID(), typ, a.Request, now))
	}
	if len(inbox) > 0 {
		if err := tx.CreateInboxMessages(ctx, inbox); err != nil {
			return err
		}
	}
	if len(events) == 0 {
		return nil
	}
	events, err := notify.Subscribed(ctx, tx, events)
	if err != nil {
		return err
	}
	return tx.CreateEvents(ctx, events)
}
