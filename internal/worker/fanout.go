package worker

import (
	"context"
	"errors"
	"time"

	"github.com/riverqueue/river"

	"github.com/notifyd/notifyd/internal/dispatch"
	"github.com/notifyd/notifyd/internal/jobs"
)

// FanoutService is the use case of campaign fan-out jobs.
type FanoutService interface {
	RunFanout(ctx context.Context, workspaceID, campaignID string, jobID int64, budget time.Duration) (bool, error)
	FailFanout(ctx context.Context, workspaceID, campaignID string, jobID int64, cause error) error
}

// FanoutSlice is how long one run of a fan-out job works before it
// snoozes, so a shutdown never waits long for it.
const FanoutSlice = 10 * time.Second

// Fanout runs a campaign's fan-out. A run works for FanoutSlice (at most
// half its timeout), then snoozes (not counted as an attempt) and
// continues in the next run; each committed batch is kept, so a failed run resumes where it
// ended. When the last of its 5 attempts fails, the campaign is failed.
type Fanout struct {
	river.WorkerDefaults[jobs.Fanout]
	Service FanoutService
	// Backoff is the first retry delay, doubled per attempt.
	Backoff time.Duration
	// JobTimeout bounds one run; zero means DefaultTimeout.
	JobTimeout time.Duration
}

// Work implements river.Worker.
func (w *Fanout) Work(ctx context.Context, job *river.Job[jobs.Fanout]) error {
	more, err := w.Service.RunFanout(ctx, job.Args.WorkspaceID, job.Args.CampaignID, job.ID, min(w.Timeout(job)/2, FanoutSlice))
	if err != nil && errors.Is(ctx.Err(), context.Canceled) {
		// Shutdown: the committed batches are kept; resume on the next
		// start without spending an attempt.
		return river.JobSnooze(0)
	}
	var snooze *dispatch.SnoozeError
	if errors.As(err, &snooze) {
		// A paused campaign: back later, no attempt spent.
		return river.JobSnooze(snooze.After)
	}
	// A failure another run would repeat (a recipient rendered over a
	// bound) fails the campaign now, and the job is not run again.
	var permanent interface{ Permanent() bool }
	if errors.As(err, &permanent) && permanent.Permanent() {
		if ferr := w.Service.FailFanout(context.WithoutCancel(ctx), job.Args.WorkspaceID, job.Args.CampaignID, job.ID, err); ferr != nil {
			return ferr
		}
		return river.JobCancel(err)
	}
	if err != nil {
		if job.Attempt >= job.MaxAttempts {
			if ferr := w.Service.FailFanout(context.WithoutCancel(ctx), job.Args.WorkspaceID, job.Args.CampaignID, job.ID, err); ferr != nil {
				return ferr
			}
		}
		return err
	}
	if more {
		return river.JobSnooze(time.Millisecond)
	}
	return nil
}

// NextRetry backs off from SVC_QUEUE_BACKOFF_MS like dispatch jobs.
func (w *Fanout) NextRetry(job *river.Job[jobs.Fanout]) time.Time {
	return time.Now().Add(dispatch.Backoff(w.Backoff, job.Attempt))
}

// Timeout bounds one run.
func (w *Fanout) Timeout(*river.Job[jobs.Fanout]) time.Duration {
	if w.JobTimeout > 0 {
		return w.JobTimeout
	}
	return DefaultTimeout
}
