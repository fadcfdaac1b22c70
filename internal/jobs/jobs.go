// Package jobs declares the River job kinds. Kind strings are stable: they
// are stored with every queued job.
package jobs

import (
	"time"

	"github.com/riverqueue/river"

	"github.com/notifyd/notifyd/internal/notify"
)

// Queue names.
const (
	QueueDefault     = river.QueueDefault
	QueueMaintenance = "maintenance"
	// QueueBulk holds the dispatch jobs of bulk work (campaign
	// deliveries): they never take a slot of the default queue, where
	// transactional sends run (issue 31, item 2).
	QueueBulk = "bulk"
)

// DispatchQueue is the queue of a dispatch job of lane.
func DispatchQueue(lane notify.Lane) string {
	if lane == notify.LaneBulk {
		return QueueBulk
	}
	return QueueDefault
}

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
	// NotBefore (Unix milliseconds) is when a retry or a send whose turn
	// came later is due. A wait longer than River's scheduler interval is
	// also the job's scheduled time; a shorter one is inserted runnable
	// and snoozes on its first run, which River makes runnable again at
	// the exact time (a scheduled job waits for the scheduler's next pass,
	// up to 5 s late).
	NotBefore int64 `json:"nb,omitempty"`
	// Trace is the W3C traceparent of the request's acceptance, so its
	// dispatch continues the trace; absent when tracing was off.
	Trace string `json:"tp,omitempty"`
}

// Kind implements river.JobArgs.
func (Dispatch) Kind() string { return "dispatch" }

// DispatchMaxAttempts is River's own attempt ceiling for dispatch jobs. The
// worker ends a request after SVC_QUEUE_JOB_ATTEMPTS itself; River's ceiling
// stays higher so a job rescued after a crash is never discarded by River
// before the worker has recorded the request's final state.
const DispatchMaxAttempts = 25

// SchedulerInterval is River's scheduler interval: a job inserted for a
// later time becomes runnable at its first pass after that time.
const SchedulerInterval = 5 * time.Second

// DispatchBatch delivers the requests of one group commit (a batch of API
// sends, a fan-out batch) together: their job rows name this job's id, and
// a run claims, sends and records them as one batch. A request that must
// retry or wait leaves it for a Dispatch job of its own.
type DispatchBatch struct {
	// Count is how many requests the job carried when inserted (for
	// people reading the queue; the job rows are the truth).
	Count int `json:"n"`
	// Traces are the W3C traceparents of the requests' acceptances, by
	// request id, so each request's dispatch continues its own trace;
	// absent when tracing was off.
	Traces map[string]string `json:"tp,omitempty"`
}

// Kind implements river.JobArgs.
func (DispatchBatch) Kind() string { return "dispatch_batch" }

// DispatchBatchMax is the most requests one DispatchBatch job carries:
// enough to amortize a run's statements and fill an adapter batch of the
// email kinds (100), few enough that several workers share a large
// fan-out.
const DispatchBatchMax = 100
