package worker

import (
	"cmp"
	"context"
	"errors"
	"sync"
	"time"

	"github.com/riverqueue/river"

	"github.com/notifyd/notifyd/internal/dispatch"
	"github.com/notifyd/notifyd/internal/jobs"
	"github.com/notifyd/notifyd/internal/workflows"
)

// WorkflowService is the use case of workflow step jobs.
type WorkflowService interface {
	RunStep(ctx context.Context, ws, runID string, idx int) error
	FailStep(ctx context.Context, ws, runID string, idx int, cause error) error
	RunSteps(ctx context.Context, ws string, refs []workflows.StepRef) error
	FailSteps(ctx context.Context, ws string, refs []workflows.StepRef, cause error) error
}

// WorkflowStep runs one step of a workflow run (issue 34). A step not due
// yet (a delay reached early, a digest's open window) snoozes, which River
// does not count as an attempt; after the last attempt the run fails.
type WorkflowStep struct {
	river.WorkerDefaults[jobs.WorkflowStep]
	Service WorkflowService
	// Backoff is the first retry delay, doubled per attempt.
	Backoff time.Duration
}

// Work implements river.Worker.
func (w *WorkflowStep) Work(ctx context.Context, job *river.Job[jobs.WorkflowStep]) error {
	a := job.Args
	err := w.Service.RunStep(ctx, a.WorkspaceID, a.RunID, a.Step)
	var snooze interface{ SnoozeFor() time.Duration }
	if errors.As(err, &snooze) {
		return river.JobSnooze(snooze.SnoozeFor())
	}
	if err != nil && errors.Is(ctx.Err(), context.Canceled) {
		return river.JobSnooze(0) // shutdown: the step's row is the truth
	}
	if err != nil && job.Attempt >= job.MaxAttempts {
		if ferr := w.Service.FailStep(context.WithoutCancel(ctx), a.WorkspaceID, a.RunID, a.Step, err); ferr != nil {
			return ferr
		}
	}
	return err
}

// NextRetry backs off from SVC_QUEUE_BACKOFF_MS like dispatch jobs.
func (w *WorkflowStep) NextRetry(job *river.Job[jobs.WorkflowStep]) time.Time {
	return time.Now().Add(dispatch.Backoff(w.Backoff, job.Attempt))
}

// WorkflowSteps runs a batch of delay and send steps due at the same
// instant (issue 34): one transaction for all of them, as WorkflowStep's
// rules otherwise.
type WorkflowSteps struct {
	river.WorkerDefaults[jobs.WorkflowSteps]
	Service WorkflowService
	Backoff time.Duration
	// Running bounds the batches run at once (default 4): fifty batches
	// of 500 at once on a busy machine shared its CPU fifty ways, each
	// outlived its job's timeout and all were retried, none done.
	Running int
	once    sync.Once
	slots   chan struct{}
}

// Timeout lets a batch wait for its slot and run: ten minutes.
func (w *WorkflowSteps) Timeout(*river.Job[jobs.WorkflowSteps]) time.Duration {
	return 10 * time.Minute
}

// StepRefs are a batch job's steps as the room names them.
func StepRefs(a jobs.WorkflowSteps) []workflows.StepRef {
	refs := make([]workflows.StepRef, len(a.Steps))
	for i, r := range a.Steps {
		refs[i] = workflows.StepRef{RunID: r.RunID, Step: r.Step}
	}
	return refs
}

// Work implements river.Worker.
func (w *WorkflowSteps) Work(ctx context.Context, job *river.Job[jobs.WorkflowSteps]) error {
	w.once.Do(func() { w.slots = make(chan struct{}, cmp.Or(w.Running, 4)) })
	select {
	case w.slots <- struct{}{}:
		defer func() { <-w.slots }()
	case <-ctx.Done():
		return river.JobSnooze(0)
	}
	refs := StepRefs(job.Args)
	err := w.Service.RunSteps(ctx, job.Args.WorkspaceID, refs)
	var snooze interface{ SnoozeFor() time.Duration }
	if errors.As(err, &snooze) && snooze.SnoozeFor() <= jobs.WorkflowStepsEarly+time.Second {
		// The job was made runnable early (a scheduled job waits for
		// River's scheduler, up to SchedulerInterval late): wait here for
		// the steps' instant instead.
		t := time.NewTimer(snooze.SnoozeFor())
		select {
		case <-t.C:
			err = w.Service.RunSteps(ctx, job.Args.WorkspaceID, refs)
		case <-ctx.Done():
			t.Stop()
			return river.JobSnooze(0)
		}
	}
	if errors.As(err, &snooze) {
		return river.JobSnooze(snooze.SnoozeFor())
	}
	if err != nil && errors.Is(ctx.Err(), context.Canceled) {
		return river.JobSnooze(0)
	}
	if err != nil && job.Attempt >= job.MaxAttempts {
		if ferr := w.Service.FailSteps(context.WithoutCancel(ctx), job.Args.WorkspaceID, refs, err); ferr != nil {
			return ferr
		}
	}
	return err
}

// NextRetry backs off like WorkflowStep's.
func (w *WorkflowSteps) NextRetry(job *river.Job[jobs.WorkflowSteps]) time.Time {
	return time.Now().Add(dispatch.Backoff(w.Backoff, job.Attempt))
}
