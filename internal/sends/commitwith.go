package sends

import (
	"context"
	"errors"
	"time"

	"github.com/notifyd/notifyd/internal/gate"
	"github.com/notifyd/notifyd/internal/notify"
)

// WriteWith is a caller's own writes in the send group commit's
// transaction (issue 34: a workflow trigger's runs, a batch of step
// runs). requestIDs[i] is the request built for items[i], or "" when
// refusals[i] holds the 4xx detail that refused it at build; keep[i]
// false leaves items[i]'s request out (its run was not started, its step
// had ended). keep is read after every write of the transaction and the
// work they share (usecase.TxShareOf(ctx)) ran, so work left there may
// still fill it. It runs again, from scratch, when its batch is retried.
type WriteWith func(ctx context.Context, tx notify.Tx, requestIDs, refusals []string) (keep []bool, err error)

// CommitWith builds the requests of items (workflow sends by recipient
// profile, no API key's template rules) outside any transaction, then
// writes them and write's rows in one transaction of the send group
// commit. With key (a signed trigger), the call goes through the door as
// a signed send does: its nonce is recorded and it counts toward the
// request limits in that same transaction. items may be empty.
func (s *Service) CommitWith(ctx context.Context, ws string, key *notify.APIKey, nonce *gate.Nonce, items []*SendInput, write WriteWith) error {
	prepare := func(c *acceptCall) error {
		all, ids, refusals, err := s.buildFrom(ctx, ws, notify.SourceWorkflow, items)
		if err != nil {
			return err
		}
		c.write = func(ctx context.Context, tx notify.Tx) error {
			keep, err := write(ctx, tx, ids, refusals)
			if err != nil {
				return err
			}
			// keep is read once the transaction's shared work has run: a
			// write that left its rows to it learns there what to keep.
			c.settle = func() {
				c.accepts = c.accepts[:0]
				for i, a := range all {
					if a != nil {
						a.Existing, a.ExistingJob, a.Job = nil, nil, nil
					}
					if a != nil && keep[i] {
						c.accepts = append(c.accepts, a)
					}
				}
			}
			return nil
		}
		return nil
	}
	if key != nil {
		return s.submit(ctx, key, nonce, prepare)
	}
	c := &acceptCall{ctx: ctx}
	if err := prepare(c); err != nil {
		return err
	}
	if len(items) <= 1 {
		return s.accept.do(c)
	}
	// A batch of its own (workflow steps due together) is its own
	// transaction: queued, fifty of them became one transaction of 25,000
	// runs on one connection, where apart they run side by side.
	if err := s.accept.commit(context.WithoutCancel(ctx), []*acceptCall{c}, false); err != nil {
		return err
	}
	return c.Err
}

// buildFrom builds the requests of items of source: an item refused at
// build has a nil Accept, no id and its refusal's detail.
func (s *Service) buildFrom(ctx context.Context, ws, source string, items []*SendInput) ([]*notify.Accept, []string, []string, error) {
	all := make([]*notify.Accept, len(items))
	ids, refusals := make([]string, len(items)), make([]string, len(items))
	if len(items) == 0 {
		return all, ids, refusals, nil
	}
	now := s.Now()
	scheds := make([]*time.Time, len(items))
	var valid []int
	for i, in := range items {
		sched, err := s.validateSend(in, "", now)
		if e, ok := notify.AsError(err); ok && e.Status() < 500 {
			refusals[i] = e.Detail
			continue
		} else if err != nil {
			return nil, nil, nil, err
		}
		scheds[i] = sched
		valid = append(valid, i)
	}
	ins, sch := make([]*SendInput, len(valid)), make([]*time.Time, len(valid))
	for j, i := range valid {
		ins[j], sch[j] = items[i], scheds[i]
	}
	rs, err := s.buildRequestsOf(ctx, ws, nil, ins, sch, now, false)
	if err != nil {
		return nil, nil, nil, err
	}
	for j, b := range rs {
		i := valid[j]
		if b.err != nil {
			var e *notify.Error
			if !errors.As(b.err, &e) || e.Status() >= 500 {
				return nil, nil, nil, b.err
			}
			refusals[i] = e.Detail
			continue
		}
		b.req.Source = source
		all[i] = &notify.Accept{Request: b.req, MaxAttempts: s.jobAttempts, Final: b.req.Status.Terminal()}
		ids[i] = b.req.ID
	}
	return all, ids, refusals, nil
}
