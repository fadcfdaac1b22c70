package service

import (
	"context"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

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
	// then waits in process); minSnooze is the shortest snooze.
	snoozeLead = maxInlineWait / 2
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
	limiter    *dispatch.Limiter
	cluster    *dispatch.Cluster
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
	l := &limits{limiter: dispatch.NewLimiter(now), cluster: dispatch.NewCluster(), metrics: m,
		workerID: host + ":" + strconv.Itoa(os.Getpid()) + ":" + newID(), maxWaiters: int64(maxWaiters),
		cache: map[string]*limitEntry{}}
	l.limiter.SetSharer(l.cluster)
	return l
}

// WorkerID is this process's id in the dispatch_workers heartbeat table.
func (s *Service) WorkerID() string { return s.lim.workerID }

// workspaceLimits returns the workspace's dispatch limits, read at most
// once per limitCacheTTL; concurrent misses of one workspace share a read.
func (s *Service) workspaceLimits(ctx context.Context, ws string) ([]*notify.DispatchLimit, error) {
	s.lim.mu.Lock()
	e := s.lim.cache[ws]
	if e == nil {
		e = &limitEntry{}
		s.lim.cache[ws] = e
	}
	s.lim.mu.Unlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	now := s.now()
	if e.loaded && now.Sub(e.at) < limitCacheTTL && !now.Before(e.at) {
		return e.list, nil
	}
	var list []*notify.DispatchLimit
	err := s.store.View(ctx, func(tx notify.Tx) (err error) {
		list, err = tx.FindDispatchLimits(ctx, ws)
		return err
	})
	if err != nil {
		return nil, err
	}
	e.list, e.at, e.loaded = list, now, true
	return list, nil
}

// forgetLimits drops the cached limits of workspace ws, so that a change
// made through this process applies to its next send (other processes
// read it within limitCacheTTL).
func (s *Service) forgetLimits(ws string) {
	s.lim.mu.Lock()
	delete(s.lim.cache, ws)
	s.lim.mu.Unlock()
}

// applicableLimits are the enabled limits of a send of r through account,
// as limiter keys: the workspace, the provider account, and the API key
// that accepted the request.
func applicableLimits(list []*notify.DispatchLimit, r *notify.Request, accountID string) []dispatch.Limit {
	var out []dispatch.Limit
	for _, l := range list {
		if !l.Enabled {
			continue
		}
		switch {
		case l.Scope == notify.DispatchScopeWorkspace:
			out = append(out, dispatch.Limit{Key: "workspace:" + r.WorkspaceID, Rate: float64(l.RatePerSecond)})
		case l.Scope == notify.DispatchScopeProvider && l.TargetID == accountID:
			out = append(out, dispatch.Limit{Key: "provider:" + r.WorkspaceID + ":" + accountID, Rate: float64(l.RatePerSecond)})
		case l.Scope == notify.DispatchScopeAPIKey && r.APIKeyID != "" && l.TargetID == r.APIKeyID:
			out = append(out, dispatch.Limit{Key: "apiKey:" + r.WorkspaceID + ":" + r.APIKeyID, Rate: float64(l.RatePerSecond)})
		}
	}
	return out
}

// synchronous sends (OTP, provider test-send) have a caller waiting for the
// answer: they take their tokens but never wait.
func synchronous(r *notify.Request) bool {
	return r.Source == notify.SourceOTP || r.Source == notify.SourceTest
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
func (s *Service) waitDispatchLimits(ctx context.Context, rn *run, account *notify.ProviderAccount) error {
	list, err := s.workspaceLimits(ctx, rn.req.WorkspaceID)
	if err != nil {
		s.log.WarnContext(ctx, "dispatch limits unreadable; sending unlimited", "workspace", rn.req.WorkspaceID, "err", err)
		return nil
	}
	lims := applicableLimits(list, rn.req, account.ID)
	if len(lims) == 0 {
		return nil
	}
	res := s.lim.limiter.Reserve(lims...)
	if synchronous(rn.req) {
		return nil // counted, never delayed
	}
	if res.Wait > 0 && len(rn.attempts) == 0 &&
		(res.Wait > maxInlineWait || s.lim.waiting.Load() >= s.lim.maxWaiters) {
		res.Cancel()
		s.lim.metrics.Snoozed(dispatch.Scope(res.Binding))
		after := max(s.lim.limiter.SnoozeSlot(res.Binding, snoozeLead), minSnooze)
		return &dispatch.SnoozeError{After: after, Reason: "dispatch limit " + dispatch.Scope(res.Binding)}
	}
	for key, w := range res.Waits {
		s.lim.metrics.ObserveWait(dispatch.Scope(key), w.Seconds())
	}
	if res.Wait <= 0 {
		return nil
	}
	s.lim.waiting.Add(1)
	s.lim.metrics.AddWaiting(1)
	defer func() {
		s.lim.waiting.Add(-1)
		s.lim.metrics.AddWaiting(-1)
	}()
	// The wait is measured again after each slice at the bucket's current
	// rate: a grown cluster share or a raised limit shortens it.
	for {
		rem := s.lim.limiter.Remaining(res)
		if rem <= 0 {
			return nil
		}
		if err := sleepCtx(ctx, min(rem, waitSlice)); err != nil {
			res.Cancel()
			return err
		}
	}
}

// haltRun ends a job run stopped by its dispatch-limit wait before any
// provider call: the request and job go back to queued (unless the
// request was canceled meanwhile) and the job is snoozed, not failed. A
// run interrupted by shutdown is snoozed for no time.
func (s *Service) haltRun(ctx context.Context, rn *run, cause error) error {
	if len(rn.attempts) > 0 {
		return cause // mid-run: River retries the job
	}
	snooze, ok := cause.(*dispatch.SnoozeError)
	if !ok {
		snooze = &dispatch.SnoozeError{Reason: "interrupted: " + cause.Error()}
	}
	ctx = context.WithoutCancel(ctx)
	canceled := false
	err := s.store.Batch(ctx, func(tx notify.Tx) error {
		cur, err := tx.LockRequest(ctx, rn.req.WorkspaceID, rn.req.ID)
		if err != nil {
			return err
		}
		if notify.TerminalStatus(cur.Status) {
			canceled = true
			return nil
		}
		now := s.now()
		rn.req.Status, rn.req.UpdatedAt = notify.StatusQueued, now
		rn.job.Status, rn.job.AttemptsMade, rn.job.StartedAt = notify.JobQueued, max(rn.job.AttemptsMade-1, 0), nil
		if err := tx.UpdateRequest(ctx, rn.req); err != nil {
			return err
		}
		return tx.UpdateJob(ctx, rn.job)
	})
	if err != nil {
		return err
	}
	if canceled {
		return nil
	}
	return snooze
}

// DispatchHeartbeat publishes this worker's demand per limit key, drops
// stale workers, and recomputes this process's share of every limit from
// the live workers. Worker processes call it every HeartbeatInterval; it
// also forgets idle buckets.
func (s *Service) DispatchHeartbeat(ctx context.Context) error {
	now := s.now()
	// Demand per key: sends reserved per second plus the sends waiting now.
	demand := s.lim.cluster.TakeDemand(now)
	for _, debts := range []map[string]float64{s.lim.limiter.Debts(), s.dispatch.batches.Backlog()} {
		for k, d := range debts {
			demand[k] += d
		}
	}
	me := &notify.DispatchWorker{ID: s.lim.workerID, Demand: demand, HeartbeatAt: now}
	var rows []*notify.DispatchWorker
	err := s.store.Update(ctx, func(tx notify.Tx) error {
		if err := tx.PutDispatchWorker(ctx, me); err != nil {
			return err
		}
		if _, err := tx.DeleteStaleDispatchWorkers(ctx, now.Add(-WorkerStaleAfter)); err != nil {
			return err
		}
		var err error
		rows, err = tx.FindDispatchWorkers(ctx, now.Add(-WorkerStaleAfter))
		return err
	})
	if err != nil {
		return err
	}
	ws := make([]dispatch.WorkerDemand, len(rows))
	for i, r := range rows {
		ws[i] = dispatch.WorkerDemand{ID: r.ID, Demand: r.Demand}
	}
	idle := s.lim.cluster.Update(s.lim.workerID, ws)
	s.lim.limiter.Drain(idle)
	s.dispatch.batches.Drain(idle, 2*HeartbeatInterval+HeartbeatInterval/5) // vendor call budgets: callshare.go
	s.lim.metrics.SetWorkers(s.lim.cluster.Live())
	s.lim.limiter.Prune(time.Minute)
	return nil
}

// LeaveDispatchCluster deletes this worker's heartbeat row at shutdown so
// the others take its share at their next heartbeat.
func (s *Service) LeaveDispatchCluster(ctx context.Context) error {
	return s.store.Update(ctx, func(tx notify.Tx) error { return tx.DeleteDispatchWorker(ctx, s.lim.workerID) })
}

// sleepCtx sleeps for d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
