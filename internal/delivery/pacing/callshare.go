package pacing

import (
	"math"
	"strings"
	"time"
)

// Cluster-wide call budget (PostgreSQL, several worker processes): each
// account's calls per second are split among the live workers by the same
// heartbeat share as the dispatch limits (Cluster). Every reserved call
// counts as demand for the account's key CallKey(account); the calls that
// queued messages still need are published with it (Backlog), and the
// flusher spaces calls at this process's part of the rate. Alone (SQLite,
// or the only worker sending to the account) a process gets the whole rate.

// callKeyPrefix starts the cluster demand key of an account's vendor
// calls; the dispatch-limit keys start with their scope.
const callKeyPrefix = "calls:"

// budgetSlice bounds one wait for the call budget: the next slot is
// measured again after it at the current share.
const budgetSlice = 250 * time.Millisecond

// CallKey is the cluster demand key of the vendor calls of account.
func CallKey(account string) string { return callKeyPrefix + account }

// SetSharer installs the cluster share of the call budgets; call it before
// first use. Without one each process applies the whole rate.
func (b *Batcher) SetSharer(s Sharer) { b.share = s }

// spacing is the time between two calls of q at this process's part of
// the account's calls per second (0: unlimited); count counts one call as
// demand. b.mu must be held.
func (b *Batcher) spacing(q *batchQueue, count bool) time.Duration {
	cps := q.acct.Config.CallsPerSecond
	if cps <= 0 {
		return 0
	}
	if b.share != nil {
		if part := b.share.Share(CallKey(q.acct.Key), cps, count); part > 0 {
			cps = part
		}
	}
	return time.Duration(float64(time.Second) / cps * callSpacingMargin)
}

// next is the earliest start of q's next call: one spacing at the current
// share after the latest reserved call (GCRA with a burst of one), and not
// before a Retry-After. The spacing is taken at the share in force when
// the call is due, so a share that shrinks never lets two calls closer
// than the new spacing (no burst on a change), and one that grows shortens
// the wait at once. b.mu must be held.
func (b *Batcher) next(q *batchQueue) time.Time {
	next := q.hold
	if !q.last.IsZero() {
		if t := q.last.Add(b.spacing(q, false)); t.After(next) {
			next = t
		}
	}
	return next
}

// Backlog reports, per CallKey, the calls this process's queued messages
// still need (accounts with a call budget only): with the calls reserved
// during the interval it is the demand the heartbeat publishes, so a
// process whose share holds messages back asks for more.
func (b *Batcher) Backlog() map[string]float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[string]float64{}
	for key, q := range b.qs {
		if len(q.items) == 0 || q.acct.Config.CallsPerSecond <= 0 {
			continue
		}
		out[CallKey(key)] = math.Ceil(float64(len(q.items)) / float64(max(q.acct.Config.MaxSize, 1)))
	}
	return out
}

// Drain holds back the call budgets of keys: accounts other workers call
// and this one did not during the last interval (Cluster.Update). The
// peers then share the account's whole rate among themselves; were this
// process to call at once at its provisional part (rate / live workers),
// the cluster would call up to 1.5 × the rate until the peers' next
// heartbeats see its demand. So its next call waits until hold after now
// (two heartbeats: its own publishes its backlog, the peers' next one
// shrinks their parts), and never sooner than one spacing after now. The
// limiter drains its buckets for the same reason. Other keys are ignored.
func (b *Batcher) Drain(keys []string, hold time.Duration) {
	now := time.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, k := range keys {
		acct, ok := strings.CutPrefix(k, callKeyPrefix)
		if !ok {
			continue
		}
		q := b.qs[acct]
		if q == nil {
			q = &batchQueue{acct: BatchAccount{Key: acct}, wake: make(chan struct{}, 1)}
			b.qs[acct] = q
		}
		if len(q.items) > 0 {
			continue // already waiting: its backlog is in this heartbeat
		}
		if q.last.Before(now) {
			q.last = now
		}
		if until := now.Add(hold); until.After(q.hold) {
			q.hold = until
		}
	}
}
