package service

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/notifyd/notifyd/internal/groupcommit"
	"github.com/notifyd/notifyd/internal/notify"
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
	ctx   context.Context
	key   *notify.APIKey
	nonce *Nonce
	// accepts are the requests to accept; refuse, when set instead, is the
	// 4xx found before the commit (a body that did not decode or
	// validate): the call still counts toward the limits and records its
	// nonce, and answers refuse unless a limit answers 429 first.
	accepts []*notify.Accept
	refuse  error
	err     error
	done    chan struct{}
}

// errStaleKey: the API key a send was verified with changed since it was
// cached (rotated, suspended, revoked, rescoped). Nothing of the call was
// written; it is verified again against the stored key.
var errStaleKey = errors.New("API key changed since it was cached")

// acceptor runs the send group commit.
type acceptor struct {
	s       *Service
	q       *groupcommit.Queue[*acceptCall]
	mu      sync.Mutex
	touched map[string]time.Time // when each key's last use was last written
}

// newAcceptor runs up to writers batches at once: 1 on SQLite (one
// writer); more were slower on PostgreSQL too (docs/BENCHMARKS.md).
func newAcceptor(s *Service, writers int) *acceptor {
	a := &acceptor{s: s, touched: map[string]time.Time{}}
	a.q = groupcommit.New(max(writers, 1), maxAcceptBatch, a.run)
	return a
}

// do queues c for the next batch and waits for its answer.
func (a *acceptor) do(c *acceptCall) error {
	c.done = make(chan struct{})
	a.q.Add(c)
	select {
	case <-c.done:
		return c.err
	case <-c.ctx.Done():
		// The call may still commit; the caller has given up on the answer.
		return c.ctx.Err()
	}
}

func (c *acceptCall) Context() context.Context { return c.ctx }

// Answer gives the call its answer (nil: accepted).
func (c *acceptCall) Answer(err error) {
	c.err = err
	close(c.done)
}

func (a *acceptor) run(calls []*acceptCall) {
	live := groupcommit.Live(calls)
	if len(live) == 0 {
		return
	}
	ctx := context.Background()
	err := a.commit(ctx, live, false)
	if errors.Is(err, errRateRace) {
		// Another process admitted requests between this batch's read of
		// the counters and its additions: run it again holding them.
		err = a.commit(ctx, live, true)
	}
	if err != nil && len(live) > 1 {
		// One call must not fail the others (a value the database
		// refuses): each runs alone.
		for _, c := range live {
			if err := a.commit(ctx, []*acceptCall{c}, true); err != nil {
				c.err = err
			}
			close(c.done)
		}
		return
	}
	// After a commit each call holds its own answer (nil when accepted).
	for _, c := range live {
		if err != nil {
			c.err = err
		}
		close(c.done)
	}
}

// commit runs one batch transaction; lock reads the limit counters under
// their locks (after a race, or for a lone retried call).
func (a *acceptor) commit(ctx context.Context, calls []*acceptCall, lock bool) error {
	s := a.s
	now := s.Now()
	var touch []*notify.APIKey
	err := s.Store.UpdateUrgent(ctx, func(tx notify.Tx) error {
		for _, c := range calls {
			c.err = nil
			for _, acc := range c.accepts {
				acc.Existing, acc.ExistingJob, acc.Job = nil, nil, nil
			}
		}
		if err := confirmKeys(ctx, tx, calls); err != nil {
			return err
		}
		if err := useNonces(ctx, tx, calls, now); err != nil {
			return err
		}
		keys := make([]*notify.APIKey, len(calls))
		for i, c := range calls {
			if c.err == nil {
				keys[i] = c.key
			}
		}
		adm, err := s.planAdmission(ctx, tx, keys, now)
		if err != nil {
			return err
		}
		if err := adm.read(ctx, tx, lock); err != nil {
			return err
		}
		var accepts []*notify.Accept
		for i, c := range calls {
			if c.err != nil {
				continue
			}
			if c.err = adm.admit(i); c.err != nil {
				continue
			}
			if c.refuse != nil {
				c.err = c.refuse
				continue
			}
			accepts = append(accepts, c.accepts...)
		}
		if err := tx.AcceptRequests(ctx, accepts, now); err != nil {
			return err
		}
		touch = a.toTouch(calls, now)
		for _, k := range touch {
			if err := tx.TouchAPIKey(ctx, k.ID, now); err != nil {
				return err
			}
		}
		// Last, so a counter row is locked from here to the commit only.
		return adm.write(ctx, tx, lock)
	})
	if err == nil {
		a.mu.Lock()
		for _, k := range touch {
			a.touched[k.ID] = now
		}
		a.mu.Unlock()
	}
	return err
}

// toTouch lists the keys of calls whose last use was written more than a
// minute ago.
func (a *acceptor) toTouch(calls []*acceptCall, now time.Time) []*notify.APIKey {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []*notify.APIKey
	for _, c := range calls {
		if c.err != nil || slices.ContainsFunc(out, func(k *notify.APIKey) bool { return k.ID == c.key.ID }) {
			continue
		}
		last, ok := a.touched[c.key.ID]
		if !ok && c.key.LastUsedAt != nil {
			last, ok = *c.key.LastUsedAt, true
		}
		if !ok || now.Sub(last) > time.Minute {
			out = append(out, c.key)
		}
	}
	return out
}

// confirmKeys reads each cached API key of calls once and marks the calls
// whose key changed since it was cached (errStaleKey).
func confirmKeys(ctx context.Context, tx notify.Tx, calls []*acceptCall) error {
	stored := map[string]*notify.APIKey{}
	for _, c := range calls {
		if c.nonce == nil || !c.nonce.cached {
			continue
		}
		k, ok := stored[c.key.ID]
		if !ok {
			var err error
			k, err = tx.FindAPIKey(ctx, c.key.WorkspaceID, c.key.ID)
			if notify.IsNotFound(err) {
				k, err = nil, nil
			}
			if err != nil {
				return err
			}
			stored[c.key.ID] = k
		}
		if k == nil || !sameKey(k, c.key) {
			c.err = errStaleKey
		}
	}
	return nil
}

// useNonces records the nonces of the calls still in play in one
// statement; a nonce seen before (or twice in the batch) is a replay.
func useNonces(ctx context.Context, tx notify.Tx, calls []*acceptCall, now time.Time) error {
	var uses []notify.NonceUse
	var owners []*acceptCall
	seen := map[[2]string]bool{}
	for _, c := range calls {
		if c.err != nil || c.nonce == nil {
			continue
		}
		id := [2]string{c.nonce.key.KeyID, c.nonce.value}
		if seen[id] {
			c.err = notify.Unauthorized(detailReplay)
			continue
		}
		seen[id] = true
		uses = append(uses, notify.NonceUse{KeyID: id[0], Nonce: id[1], ExpiresAt: c.nonce.expires})
		owners = append(owners, c)
	}
	if len(uses) == 0 {
		return nil
	}
	fresh, err := tx.UseNonces(ctx, uses, now)
	if err != nil {
		return err
	}
	for i, c := range owners {
		if !fresh[i] {
			c.err = notify.Unauthorized(detailReplay)
		}
	}
	return nil
}
