package worker

import (
	"cmp"
	"context"
	"errors"
	"time"

	"github.com/riverqueue/river"

	"github.com/notifyd/notifyd/internal/dispatch"
	"github.com/notifyd/notifyd/internal/jobs"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/tracing"
)

// Runner runs the requests a queue job carries (delivery.Engine).
type Runner interface {
	RunJob(ctx context.Context, queueJobID int64) error
}

// DefaultTimeout is the run bound of a dispatch job when none is set.
const DefaultTimeout = 2 * time.Minute

// Dispatch delivers the request of a dispatch job (a scheduled send, a
// retry, a send whose turn came later): the engine records every state
// change; this worker only maps its answer onto River.
type Dispatch struct {
	river.WorkerDefaults[jobs.Dispatch]
	Engine Runner
	// Backoff is the retry delay of a run that failed as a whole (the
	// database was unreachable), doubled per attempt.
	Backoff time.Duration
	// JobTimeout bounds one run; zero means DefaultTimeout. It must stay
	// below River's RescueStuckJobsAfter.
	JobTimeout time.Duration
}

// Work implements river.Worker.
func (w *Dispatch) Work(ctx context.Context, job *river.Job[jobs.Dispatch]) error {
	if wait := time.Until(time.UnixMilli(job.Args.NotBefore)); job.Args.NotBefore != 0 && wait > 0 {
		return river.JobSnooze(wait) // not due yet: back at the exact time, no attempt spent
	}
	ctx = tracing.WithParent(ctx, job.Args.RequestID, job.Args.Trace)
	return runJob(laneContext(ctx, job.Queue), w.Engine, job.ID)
}

// NextRetry is SPEC's exponential backoff from SVC_QUEUE_BACKOFF_MS.
func (w *Dispatch) NextRetry(job *river.Job[jobs.Dispatch]) time.Time {
	return time.Now().Add(dispatch.Backoff(w.Backoff, job.Attempt))
}

// Timeout bounds one run: every route of a request is tried within it.
func (w *Dispatch) Timeout(*river.Job[jobs.Dispatch]) time.Duration {
	return cmp.Or(w.JobTimeout, DefaultTimeout)
}

// DispatchBatch delivers the requests of a group commit together.
type DispatchBatch struct {
	river.WorkerDefaults[jobs.DispatchBatch]
	Engine     Runner
	Backoff    time.Duration
	JobTimeout time.Duration
}

// Work implements river.Worker.
func (w *DispatchBatch) Work(ctx context.Context, job *river.Job[jobs.DispatchBatch]) error {
	ctx = tracing.WithParents(ctx, job.Args.Traces)
	return runJob(laneContext(ctx, job.Queue), w.Engine, job.ID)
}

// laneContext marks the run of a job of the bulk queue as bulk work, so
// that its write transactions wait behind transactional ones on a store
// with a single writer (notify.WithLane).
func laneContext(ctx context.Context, queue string) context.Context {
	if queue == jobs.QueueBulk {
		return notify.WithLane(ctx, notify.LaneBulk)
	}
	return ctx
}

// NextRetry is SPEC's exponential backoff from SVC_QUEUE_BACKOFF_MS.
func (w *DispatchBatch) NextRetry(job *river.Job[jobs.DispatchBatch]) time.Time {
	return time.Now().Add(dispatch.Backoff(w.Backoff, job.Attempt))
}

// Timeout bounds one run.
func (w *DispatchBatch) Timeout(*river.Job[jobs.DispatchBatch]) time.Duration {
	return cmp.Or(w.JobTimeout, DefaultTimeout)
}

// runJob runs a queue job; a job with a request whose earlier run may be
// live snoozes (no attempt spent) until that run must have ended.
func runJob(ctx context.Context, e Runner, id int64) error {
	err := e.RunJob(ctx, id)
	var snooze *dispatch.SnoozeError
	if errors.As(err, &snooze) {
		return river.JobSnooze(snooze.After)
	}
	return err
}
