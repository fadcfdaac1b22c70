package jobs

import (
	"time"

	"github.com/riverqueue/river"
)

// RetentionInterval is how often the retention purge runs (on the leader).
const RetentionInterval = time.Hour

// Retention deletes what NOTIFYD_RETENTION and NOTIFYD_AUDIT_RETENTION no
// longer keep. It runs periodically on the leader.
type Retention struct{}

// Kind implements river.JobArgs.
func (Retention) Kind() string { return "retention" }

// InsertOpts keeps the purge on the maintenance queue and unique per
// interval, so restarts and several nodes never run it twice at once.
func (Retention) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueMaintenance, MaxAttempts: 3,
		UniqueOpts: river.UniqueOpts{ByPeriod: RetentionInterval}}
}
