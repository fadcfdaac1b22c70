package gate

import (
	"context"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
)

// lastCounterSweep is when old rate counters were last deleted (unix ms).
var lastCounterSweep atomic.Int64

// counterRetention keeps counters of windows that may still be current
// (the longest window is an hour).
const counterRetention = 2 * time.Hour

// CheckRequestLimit applies SPEC "Request rate limits" to one
// authenticated Notification API request of key: the workspace limit
// first (SVC-4290), then the key limit (SVC-4291); both counters grow
// only when both pass. Concurrent checks go together (ratebatch.go): one
// transaction locks the counters they touch, admits them in arrival order
// and writes the new counts, so counts are exact across processes while a
// busy workspace's counter row is locked once per batch, not once per
// request.
func (g *Gate) CheckRequestLimit(ctx context.Context, key *notify.APIKey) error {
	now := g.Now()
	if err := g.rates.check(ctx, key, now); err != nil {
		return err
	}
	g.sweepRateCounters(ctx, now)
	return nil
}

// RateWindow is the counter key and start of the fixed window holding now.
// The window length is part of the key, so changing it starts afresh.
func RateWindow(scope string, windowSeconds int, now time.Time) (string, time.Time) {
	w := int64(windowSeconds)
	start := time.Unix(now.Unix()/w*w, 0)
	return scope + ":" + strconv.Itoa(windowSeconds), start
}

// sweepRateCounters deletes old counter windows at most once a minute,
// best effort.
func (g *Gate) sweepRateCounters(ctx context.Context, now time.Time) {
	last := lastCounterSweep.Load()
	if now.UnixMilli()-last < time.Minute.Milliseconds() || !lastCounterSweep.CompareAndSwap(last, now.UnixMilli()) {
		return
	}
	_ = g.Store.Update(ctx, func(tx notify.Tx) error {
		_, err := tx.DeleteRateCounters(ctx, now.Add(-counterRetention))
		return err
	})
}

// CountWindow counts one request of scope toward max per fixed window of
// windowSeconds, in tx, on the request limits' counters: over max it
// answers 429 SVC-42900 with Retry-After the window's end, and the caller
// returns that error so its transaction, and the count, roll back. A
// limit of its own (an inbound hook's, issue 36) uses it; the counters
// are swept with the request limits' (SweepCounters).
func CountWindow(ctx context.Context, tx notify.Tx, scope string, windowSeconds, max int, now time.Time, detail string) error {
	key, start := RateWindow(scope, windowSeconds, now)
	counts, err := tx.AddRateCounts(ctx, []notify.RateWindow{{ScopeKey: key, Start: start, N: 1}})
	if err != nil {
		return err
	}
	if counts[0] > max {
		e := notify.Errorf(notify.CodeTooManyRequests, "%s", detail)
		e.RetryAfter = start.Add(time.Duration(windowSeconds) * time.Second).Sub(now)
		return e
	}
	return nil
}

// SweepCounters deletes old counter windows at most once a minute, best
// effort, outside any transaction: for callers of CountWindow.
func (g *Gate) SweepCounters(ctx context.Context) { g.sweepRateCounters(ctx, g.Now()) }
