package delivery

import (
	"context"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/notifyd/notifyd/internal/delivery/pacing"
	"github.com/notifyd/notifyd/internal/dispatch"
	"github.com/notifyd/notifyd/internal/metrics"
	"github.com/notifyd/notifyd/internal/notify"
)

// Dispatch-limit enforcement (SPEC "Dispatch limits"): token buckets at
// workspace, provider-account and API-key scope, all applied before each
// provider call. They delay sends and never reject.
const (
	// limitCacheTTL is how long a workspace's dispatch limits are reused
	// before the hot path reads them again; a change applies within it.
	limitCacheTTL = 2 * time.Second
	// maxInlineWait is the longest wait a job run sleeps through; a longer
	// one snoozes the job so it does not hold a worker slot.
	maxInlineWait = 10 * time.Second
	// snoozeLead is how long before its turn a snoozed job comes back (it
	// then waits in process); minSnooze is the shortest snooze. River
	// makes a job snoozed for longer than its scheduler's interval (5 s)
	// available only at the scheduler's next pass, up to 5 s late, so the
	// lead covers that interval and a heartbeat more.
	snoozeLead = 6 * time.Second
	minSnooze  = time.Second
	// waitSlice bounds one sleep: the wait is re-measured against the
	// service clock after each slice, so shutdown and clock moves apply.
	waitSlice = time.Second
	// DefaultDispatchMaxWaiters bounds the sends one process lets sleep on
	// dispatch limits at once; beyond it runs snooze, so limited
	// workspaces cannot take every worker slot.
	DefaultDispatchMaxWaiters = 500
	// HeartbeatInterval is how often a worker process publishes its
	// demand; WorkerStaleAfter is when a silent worker stops counting.
	HeartbeatInterval = time.Second
	WorkerStaleAfter  = 3 * time.Second
)

// limits holds the dispatch-limit state of one process.
type limits struct {
	limiter    *pacing.Limiter
	cluster    *pacing.Cluster
	workerID   string
	metrics    *metrics.Limits
	maxWaiters int64
	waiting    atomic.Int64

	mu    sync.Mutex
	cache map[string]*limitEntry // by workspace id
}

type limitEntry struct {
	mu     sync.Mutex
	at     time.Time
	loaded bool
	list   []*notify.DispatchLimit
}

func newLimits(now func() time.Time, m *metrics.Limits, maxWaiters int) *limits {
	if maxWaiters <= 0 {
		maxWaiters = DefaultDispatchMaxWaiters
	}
	host, _ := os.Hostname()
	l := &limits{limiter: pacing.NewLimiter(now), cluster: pacing.NewCluster(), metrics: m,
		workerID: host + ":" + strconv.Itoa(os.Getpid()) + ":" + newID(), maxWaiters: int64(maxWaiters),
		cache: map[string]*limitEntry{}}
	l.limiter.SetSharer(l.cluster)
	return l
}

// WorkerID is this process's id in the dispatch_workers heartbeat table.
func (e *Engine) WorkerID() string { return e.lim.workerID }

// workspaceLimits returns the workspace's dispatch limits, read at most
// once per limitCacheTTL; concurrent misses of one workspace share a read.
func (e *Engine) workspaceLimits(ctx context.Context, ws string) ([]*notify.DispatchLimit, error) {
	return e.cachedLimits(ws, func() (list []*notify.DispatchLimit, err error) {
		err = e.store.View(ctx, func(tx notify.Tx) (err error) {
			list, err = tx.FindDispatchLimits(ctx, ws)
			return err
		})
		return list, err
	})
}

// limitsIn is workspaceLimits read through tx on a miss.
func (e *Engine) limitsIn(ctx context.Context, tx notify.Tx, ws string) ([]*notify.DispatchLimit, error) {
	return e.cachedLimits(ws, func() ([]*notify.DispatchLimit, error) { return tx.FindDispatchLimits(ctx, ws) })
}

// cachedLimits answers workspace ws's limits from the cache, or from read
// when they are older than limitCacheTTL.
func (e *Engine) cachedLimits(ws string, read func() ([]*notify.DispatchLimit, error)) ([]*notify.DispatchLimit, error) {
	e.lim.mu.Lock()
	ent := e.lim.cache[ws]
	if ent == nil {
		ent = &limitEntry{}
		e.lim.cache[ws] = ent
	}
	e.lim.mu.Unlock()
	ent.mu.Lock()
	defer ent.mu.Unlock()
	now := e.now()
	if ent.loaded && now.Sub(ent.at) < limitCacheTTL && !now.Before(ent.at) {
		return ent.list, nil
	}
	list, err := read()
	if err != nil {
		return nil, err
	}
	ent.list, ent.at, ent.loaded = list, now, true
	return list, nil
}

// ForgetLimits drops the cached limits of workspace ws, so that a change
// made through this process applies to its next send (other processes
// read it within limitCacheTTL).
func (e *Engine) ForgetLimits(ws string) {
	e.lim.mu.Lock()
	delete(e.lim.cache, ws)
	e.lim.mu.Unlock()
}

// applicableLimits are the enabled limits of a send of r through account,
// as limiter keys: the workspace, the provider account, and the API key
// that accepted the request.
func applicableLimits(list []*notify.DispatchLimit, r *notify.Request, accountID string) []pacing.Limit {
	var out []pacing.Limit
	for _, l := range list {
		if !l.Enabled {
			continue
		}
		switch {
		case l.Scope == notify.DispatchScopeWorkspace:
			out = append(out, pacing.Limit{Key: "workspace:" + r.WorkspaceID, Rate: float64(l.RatePerSecond)})
		case l.Scope == notify.DispatchScopeProvider && l.TargetID == accountID:
			out = append(out, pacing.Limit{Key: "provider:" + r.WorkspaceID + ":" + accountID, Rate: float64(l.RatePerSecond)})
		case l.Scope == notify.DispatchScopeAPIKey && r.APIKeyID != "" && l.TargetID == r.APIKeyID:
			out = append(out, pacing.Limit{Key: "apiKey:" + r.WorkspaceID + ":" + r.APIKeyID, Rate: float64(l.RatePerSecond)})
		}
	}
	return out
}

// waitDispatchLimits applies the dispatch limits to one provider call of
// rn through account. It returns nil when the call may go now: at once,
// or after sleeping (in slices) for its tokens. Before the first provider
// call of a queued run, a wait longer than maxInlineWait, or one more
// sleeper than the process allows, gives the tokens back and returns a
// *dispatch.SnoozeError: the job goes back to the queue without counting
// an attempt. A reading error of the limits lets the send go (limits delay
// sends; they must not fail them). It returns ctx's error when ctx ends
// during the wait.
func (e *Engine) waitDispatchLimits(ctx context.Context, rn *run, account *notify.ProviderAccount) error {
	if rn.sync {
		// A caller waits: the send takes its tokens but never waits.
		if list, err := e.workspaceLimits(ctx, rn.req.WorkspaceID); err == nil {
			if lims := applicableLimits(list, rn.req, account.ID); len(lims) > 0 {
				e.lim.limiter.Reserve(lims...)
			}
		}
		return nil
	}
	list, err := e.workspaceLimits(ctx, rn.req.WorkspaceID)
	if err != nil {
		e.log.WarnContext(ctx, "dispatch limits unreadable; sending unlimited", "workspace", rn.req.WorkspaceID, "err", err)
		return nil
	}
	lims := applicableLimits(list, rn.req, account.ID)
	if len(lims) == 0 {
		return nil
	}
	class := pacing.Transactional
	if rn.req.Lane() == notify.LaneBulk {
		class = pacing.Bulk
	}
	res := e.lim.limiter.ReserveAs(class, lims...)
	if res.Wait > 0 && len(rn.attempts) == 0 && !rn.admitted &&
		(res.Wait > maxInlineWait || e.lim.waiting.Load() >= e.lim.maxWaiters) {
		res.Cancel()
		e.lim.metrics.Snoozed(pacing.Scope(res.Binding))
		after := max(e.lim.limiter.SnoozeSlot(res.Binding, snoozeLead), minSnooze)
		return &dispatch.SnoozeError{After: after, Reason: "dispatch limit " + pacing.Scope(res.Binding)}
	}
	for key, w := range res.Waits {
		e.lim.metrics.ObserveWait(pacing.Scope(key), w.Seconds())
	}
	if res.Wait <= 0 {
		return nil
	}
	// Admitted bulk work waits however long its turn takes (admitBulk
	// bounded it) and outside the count of sleepers that makes
	// transactional sends snooze.
	if !rn.admitted {
		e.lim.waiting.Add(1)
		defer e.lim.waiting.Add(-1)
	}
	e.lim.metrics.AddWaiting(1)
	defer e.lim.metrics.AddWaiting(-1)
	// The wait is measured again after each slice at the bucket's current
	// rate: a grown cluster share or a raised limit shortens it.
	for {
		rem := e.lim.limiter.Remaining(res)
		if rem <= 0 {
			return nil
		}
		if err := pacing.Sleep(ctx, min(rem, waitSlice)); err != nil {
			res.Cancel()
			return err
		}
	}
}

// admitBulk lets a queue job of bulk work (every request a campaign's
// delivery) take its messages only when its dispatch limits would pay
// them all within maxInlineWait, counting the transactional sends that
// go first (issue 31, item 2). Otherwise it answers a
// *dispatch.SnoozeError that rolls the claim back: the job waits in the
// queue, holding no worker slot and writing nothing, until its turn,
// spaced from the turns of the jobs held before it by their sizes, so a
// batch of 100 is put back once instead of each of its requests being
// snoozed on its own. Admitted runs then wait in process for their
// tokens whatever the number of sleepers.
func (e *Engine) admitBulk(ctx context.Context, tx notify.Tx, runs []*run) error {
	for _, rn := range runs {
		if rn.req.Lane() != notify.LaneBulk {
			return nil // transactional, or mixed (a replay): snoozes per request
		}
	}
	byKey := map[string]pacing.Limit{}
	count := map[string]float64{}
	for _, rn := range runs {
		if rn.decided || len(rn.cands) == 0 || rn.req.Test {
			continue // test requests take no dispatch-limit tokens (testmode.go)
		}
		list, err := e.limitsIn(ctx, tx, rn.req.WorkspaceID)
		if err != nil {
			return err
		}
		for _, l := range applicableLimits(list, rn.req, rn.cands[0].account.ID) {
			byKey[l.Key] = l
			count[l.Key]++
		}
	}
	wait, binding := e.lim.limiter.AdmitBulk(byKey, count, maxInlineWait)
	if wait > maxInlineWait {
		e.lim.metrics.Snoozed(pacing.Scope(binding))
		after := max(e.lim.limiter.SnoozeSlotN(binding, count[binding], snoozeLead), minSnooze)
		return &dispatch.SnoozeError{After: after, Reason: "bulk work held by dispatch limit " + pacing.Scope(binding)}
	}
	for _, rn := range runs {
		rn.admitted = true
	}
	return nil
}

// DispatchHeartbeat publishes this worker's demand per limit key, drops
// stale workers, and recomputes this process's share of every limit from
// the live workers. Worker processes call it every HeartbeatInterval; it
// also forgets idle buckets.
func (e *Engine) DispatchHeartbeat(ctx context.Context) error {
	now := e.now()
	// Demand per key: sends reserved per second plus the sends waiting now.
	demand := e.lim.cluster.TakeDemand(now)
	for _, debts := range []map[string]float64{e.lim.limiter.Debts(), e.batches.Backlog()} {
		for k, d := range debts {
			demand[k] += d
		}
	}
	me := &notify.DispatchWorker{ID: e.lim.workerID, Demand: demand, HeartbeatAt: now}
	var rows []*notify.DispatchWorker
	err := e.store.Update(ctx, func(tx notify.Tx) error {
		if err := tx.PutDispatchWorker(ctx, me); err != nil {
			return err
		}
		if _, err := tx.DeleteStaleDispatchWorkers(ctx, now.Add(-DeadAfter)); err != nil { // kept until dead: RescueOrphans reads them
			return err
		}
		var err error
		rows, err = tx.FindDispatchWorkers(ctx, now.Add(-WorkerStaleAfter))
		return err
	})
	if err != nil {
		return err
	}
	ws := make([]pacing.WorkerDemand, len(rows))
	for i, r := range rows {
		ws[i] = pacing.WorkerDemand{ID: r.ID, Demand: r.Demand}
	}
	idle := e.lim.cluster.Update(e.lim.workerID, ws)
	e.lim.limiter.Drain(idle)
	e.batches.Drain(idle, 2*HeartbeatInterval+HeartbeatInterval/5) // vendor call budgets: callshare.go
	e.lim.metrics.SetWorkers(e.lim.cluster.Live())
	e.lim.limiter.Prune(time.Minute)
	return nil
}

// LeaveDispatchCluster deletes this worker's heartbeat row at shutdown so
// the others take its share at their next heartbeat.
func (e *Engine) LeaveDispatchCluster(ctx context.Context) error {
	return e.store.Update(ctx, func(tx notify.Tx) error { return tx.DeleteDispatchWorker(ctx, e.lim.workerID) })
}
