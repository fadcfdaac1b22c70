package worker

import (
	"context"
	"errors"
	"time"

	"github.com/riverqueue/river"

	"github.com/notifyd/notifyd/internal/dispatch"
	"github.com/notifyd/notifyd/internal/jobs"
)

// Dispatcher is the use case a dispatch job runs.
type Dispatcher interface {
	Dispatch(ctx context.Context, workspaceID, requestID string, attempt int) error
}

// Dispatch delivers one notification request. The service records every
// state change; this worker only maps its answer onto River.
type Dispatch struct {
	river.WorkerDefaults[jobs.Dispatch]
	Service Dispatcher
	Backoff time.Duration
	// JobTimeout bounds one run; zero means DefaultTimeout. It must stay
	// below River's RescueStuckJobsAfter.
	JobTimeout time.Duration
}

// DefaultTimeout is the run bound of a dispatch job when none is set.
const DefaultTimeout = 2 * time.Minute

// Work implements river.Worker.
func (w *Dispatch) Work(ctx context.Context, job *river.Job[jobs.Dispatch]) error {
	// A *service.RetryError, like any error, makes River retry at NextRetry.
	err := w.Service.Dispatch(ctx, job.Args.WorkspaceID, job.Args.RequestID, job.Attempt)
	// A dispatch limit that would hold the slot too long puts the job
	// back without spending an attempt.
	var snooze *dispatch.SnoozeError
	if errors.As(err, &snooze) {
		return river.JobSnooze(snooze.After)
	}
	return err
}

// NextRetry is SPEC's exponential backoff from SVC_QUEUE_BACKOFF_MS.
func (w *Dispatch) NextRetry(job *river.Job[jobs.Dispatch]) time.Time {
	return time.Now().Add(dispatch.Backoff(w.Backoff, job.Attempt))
}

// Timeout bounds one run: every route of a request is tried within it.
func (w *Dispatch) Timeout(*river.Job[jobs.Dispatch]) time.Duration {
	if w.JobTimeout > 0 {
		return w.JobTimeout
	}
	return DefaultTimeout
}
