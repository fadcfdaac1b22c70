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
