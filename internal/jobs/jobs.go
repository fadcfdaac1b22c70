// Package jobs declares the River job kinds. Kind strings are stable: they
// are stored with every queued job.
package jobs

import (
	"time"

	"github.com/riverqueue/river"
)

// Queue names.
const (
	QueueDefault     = river.QueueDefault
	QueueMaintenance = "maintenance"
)

// Cleanup deletes expired nonces and dashboard sessions. It runs
// periodically on the leader.
type Cleanup struct{}

// Kind implements river.JobArgs.
func (Cleanup) Kind() string { return "cleanup" }

// InsertOpts keeps cleanup on its own queue and unique per period, so
// nodes never pile them up.
func (Cleanup) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueMaintenance, MaxAttempts: 3,
		UniqueOpts: river.UniqueOpts{ByPeriod: 5 * time.Minute}}
}
