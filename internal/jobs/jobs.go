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

// Dispatch delivers one notification request: route, limit, call the
// provider, record the attempt.
type Dispatch struct {
	RequestID   string `json:"rid"`
	WorkspaceID string `json:"wid"`
}

// Kind implements river.JobArgs.
func (Dispatch) Kind() string { return "dispatch" }

// DispatchMaxAttempts is River's own attempt ceiling for dispatch jobs. The
// worker ends a request after SVC_QUEUE_JOB_ATTEMPTS itself; River's ceiling
// stays higher so a job rescued after a crash is never discarded by River
// before the worker has recorded the request's final state.
const DispatchMaxAttempts = 25
