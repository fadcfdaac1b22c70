package gate

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/notifyd/notifyd/internal/groupcommit"
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
	g *Gate
	q *groupcommit.Queue[*rateCheck]
}

func newRateChecks(g *Gate) *rateChecks {
	b := &rateChecks{g: g}
	b.q = groupcommit.New(1, maxRateBatch, b.run)
	return b
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
	return groupcommit.Wait(ctx, b.q, c, c.done)
}

func (c *rateCheck) Context() context.Context { return c.ctx }
func (c *rateCheck) Answer(err error)         { c.done <- err }

func (b *rateChecks) run(batch []*rateCheck) {
	live := groupcommit.Live(batch)
	if len(live) == 0 {
		return
	}
	errs := make([]error, len(live))
	ctx := context.Background()
	keys := make([]*notify.APIKey, len(live))
	for i, c := range live {
		keys[i] = c.key
	}
	// Batch: on SQLite the checks also share the sends' group commit.
	err := b.g.Store.Batch(ctx, func(tx notify.Tx) error {
		clear(errs)
		adm, err := b.g.planAdmission(ctx, tx, keys, live[0].now)
		if err != nil {
			return err
		}
		if err := adm.read(ctx, tx, true); err != nil {
			return err
		}
		for i := range live {
			errs[i] = adm.admit(i)
		}
		return adm.write(ctx, tx, true)
	})
	for i, c := range live {
		if err != nil {
			c.done <- err
			continue
		}
		c.done <- errs[i]
	}
}

// rateCounter is one counter window touched by a batch.
type rateCounter struct {
	scope string
	start time.Time
	max   int
	count int // read at the start of the batch
	add   int // admitted by this batch
}

// admission applies the request limits to a batch of authenticated
// requests in arrival order (SPEC "Request rate limits"): the workspace
// limit first, then the key's; both counters grow only when both pass,
// so a refused request grows nothing. Each policy is read once per batch
// and each counter row is read and written once, however many requests
// it admits.
type admission struct {
	counters map[string]*rateCounter
	ids      []string // the counters in one global order
	pairs    []*[2]*rateCounter
}

// planAdmission reads the policies of keys (nil entries are requests
// that do not count) and names the counters each request touches, in the
// window holding now.
func (g *Gate) planAdmission(ctx context.Context, tx notify.Tx, keys []*notify.APIKey, now time.Time) (*admission, error) {
	a := &admission{counters: map[string]*rateCounter{}, pairs: make([]*[2]*rateCounter, len(keys))}
	type limit struct{ window, max int }
	// Every policy of a workspace in one read: its own and its keys'.
	policies := map[string]map[string]*notify.RateLimitPolicy{}
	policy := func(workspaceID, keyID string, defMax int) (limit, error) {
		ps, ok := policies[workspaceID]
		if !ok {
			list, err := tx.FindRateLimitPolicies(ctx, workspaceID)
			if err != nil {
				return limit{}, err
			}
			ps = make(map[string]*notify.RateLimitPolicy, len(list))
			for _, p := range list {
				ps[p.APIKeyID] = p
			}
			policies[workspaceID] = ps
		}
		if p := ps[keyID]; p != nil && p.Enabled {
			return limit{p.WindowSeconds, p.MaxRequests}, nil
		}
		return limit{notify.DefaultRateWindowSeconds, defMax}, nil
	}
	counter := func(scope string, l limit) *rateCounter {
		key, start := RateWindow(scope, l.window, now)
		id := key + "@" + start.String()
		c := a.counters[id]
		if c == nil {
			c = &rateCounter{scope: key, start: start, max: l.max}
			a.counters[id] = c
			a.ids = append(a.ids, id)
		}
		return c
	}
	for i, k := range keys {
		if k == nil {
			continue
		}
		ws, err := policy(k.WorkspaceID, "", notify.DefaultWorkspaceMaxRequests)
		if err != nil {
			return nil, err
		}
		kl, err := policy(k.WorkspaceID, k.ID, notify.DefaultAPIKeyMaxRequests)
		if err != nil {
			return nil, err
		}
		// Test-mode keys (issue 36) count in a workspace counter of their
		// own, under the same limit: test traffic never spends the live
		// traffic's workspace window, nor live traffic the test's.
		wsScope := "w:"
		if k.Test {
			wsScope = "wt:"
		}
		a.pairs[i] = &[2]*rateCounter{counter(wsScope+k.WorkspaceID, ws), counter("k:"+k.ID, kl)}
	}
	// One global order, so batches of several processes that lock never
	// wait on each other in a cycle.
	slices.Sort(a.ids)
	return a, nil
}

// windows lists the counters in their global order.
func (a *admission) windows() []notify.RateWindow {
	out := make([]notify.RateWindow, len(a.ids))
	for i, id := range a.ids {
		c := a.counters[id]
		out[i] = notify.RateWindow{ScopeKey: c.scope, Start: c.start, N: c.add}
	}
	return out
}

// read reads every counter; with lock it also holds their rows until the
// transaction ends (one statement each, in the global order), else it
// reads them all in one statement.
func (a *admission) read(ctx context.Context, tx notify.Tx, lock bool) error {
	if !lock {
		counts, err := tx.RateCounts(ctx, a.windows())
		for i, id := range a.ids {
			if err == nil {
				a.counters[id].count = counts[i]
			}
		}
		return err
	}
	for _, id := range a.ids {
		c := a.counters[id]
		var err error
		if c.count, err = tx.LockRateCount(ctx, c.scope, c.start); err != nil {
			return err
		}
	}
	return nil
}

// admit decides request i: nil admits it (its counters grow), else the
// 429 of the limit it exceeds.
func (a *admission) admit(i int) error {
	p := a.pairs[i]
	if p == nil {
		return nil
	}
	ws, key := p[0], p[1]
	switch {
	case ws.count+ws.add >= ws.max:
		return notify.Errorf(notify.CodeWorkspaceLimit, "Workspace request limit exceeded")
	case key.count+key.add >= key.max:
		return notify.Errorf(notify.CodeAPIKeyLimit, "API key request limit exceeded")
	}
	ws.add++
	key.add++
	return nil
}

// ErrRateRace: counters read without their locks grew beyond a limit
// before this batch added its own; the batch is undone and run again
// holding the locks.
var ErrRateRace = errors.New("request limit counters moved during the batch")

// write stores what the batch admitted. Counters read under their locks
// are set; counters read without them are added to, which locks them
// only from here to the commit, and a sum beyond a limit undoes the
// batch (ErrRateRace): another process admitted requests meanwhile.
func (a *admission) write(ctx context.Context, tx notify.Tx, locked bool) error {
	if locked {
		for _, id := range a.ids {
			c := a.counters[id]
			if c.add == 0 {
				continue
			}
			if err := tx.SetRateCount(ctx, c.scope, c.start, c.count+c.add); err != nil {
				return err
			}
		}
		return nil
	}
	var grown []notify.RateWindow
	var maxes []int
	for _, w := range a.windows() {
		if w.N > 0 {
			grown = append(grown, w)
			maxes = append(maxes, a.counters[w.ScopeKey+"@"+w.Start.String()].max)
		}
	}
	counts, err := tx.AddRateCounts(ctx, grown)
	if err != nil {
		return err
	}
	for i, n := range counts {
		if n > maxes[i] {
			return ErrRateRace
		}
	}
	return nil
}
