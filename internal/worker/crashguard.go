package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/notifyd/notifyd/internal/crashfault"
	"github.com/notifyd/notifyd/internal/delivery/pacing"
	"github.com/notifyd/notifyd/internal/jobs"
)

// GuardEngine is what the crash guard asks the delivery engine.
type GuardEngine interface {
	// QuarantineQueueJob ends a dispatch queue job that crashed its
	// process too often: it splits a job of several requests into
	// isolated jobs counting keep crashes and answers how many, or fails
	// its one request with reason.
	QuarantineQueueJob(ctx context.Context, queueJobID int64, reason string, keep int) (isolated int, err error)
	// RunningQueueJobs lists the jobs of queue the database shows
	// running under this process.
	RunningQueueJobs(ctx context.Context, queue string) ([]int64, error)
}

// WebhookQuarantine ends a webhook delivery failed with a reason.
type WebhookQuarantine interface {
	FailWebhookDelivery(ctx context.Context, workspaceID, deliveryID string, jobID int64, reason string) error
}

// CrashGuard is a River worker middleware that keeps a job which kills
// its process (an out-of-memory render, say) from killing every restart:
// a job handed back jobs.QuarantineAfterCrashes times after its process
// died (the count is the rescue's, in the job's metadata: jobs.Crashes)
// is not run again. Its owner ends instead, with the reason recorded:
// the request fails into the dead-letter queue, the campaign fails, the
// webhook delivery fails; the queue job is cancelled. A dispatch job
// still carrying several requests is split into isolated jobs instead
// (GuardEngine.QuarantineQueueJob), so only the message to blame fails.
//
// A job of the isolated queue runs only once the database shows no
// other isolated job running under this process: the queue frees a
// worker slot when a run returns, before it records the job's end, and a
// crash in that moment would be counted against a job that was done.
type CrashGuard struct {
	river.MiddlewareDefaults
	Engine   GuardEngine
	Fanout   FanoutService
	Webhooks WebhookQuarantine
	// Workflows fails the run of a workflow step that kept crashing; nil
	// only cancels the job.
	Workflows WorkflowService
	Logger    *slog.Logger
}

// isolatedWait bounds how long an isolated job waits for the end of the
// one before it to be recorded (River's completer takes milliseconds, and
// retries for about half a minute while the database is away); then it
// snoozes and comes back.
const isolatedWait = 5 * time.Second

// Work implements rivertype.WorkerMiddleware.
func (g *CrashGuard) Work(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
	n := jobs.Crashes(job.Metadata)
	if n >= jobs.QuarantineAfterCrashes {
		return g.quarantine(ctx, job, n)
	}
	if job.Queue == jobs.QueueIsolated {
		if err := g.alone(ctx, job.ID); err != nil {
			return err
		}
	}
	crashfault.Hit("job", job.Kind)
	return doInner(ctx)
}

// alone waits until job id is the only isolated job the database shows
// running under this process.
func (g *CrashGuard) alone(ctx context.Context, id int64) error {
	deadline := time.Now().Add(isolatedWait)
	for {
		ids, err := g.Engine.RunningQueueJobs(ctx, jobs.QueueIsolated)
		if err != nil {
			return err
		}
		if len(ids) == 0 || len(ids) == 1 && ids[0] == id {
			return nil
		}
		if time.Now().After(deadline) {
			return river.JobSnooze(time.Second)
		}
		if err := pacing.Sleep(ctx, 20*time.Millisecond); err != nil {
			return err
		}
	}
}

// QuarantineReason is the recorded reason of a job ended after n crashes;
// what names the job's work.
func QuarantineReason(n int, what string) string {
	return fmt.Sprintf("quarantined: the worker process died %d times while running this %s; it is not run again", n, what)
}

func (g *CrashGuard) quarantine(ctx context.Context, job *rivertype.JobRow, n int) error {
	log := g.Logger.With("job", job.ID, "kind", job.Kind, "crashes", n)
	var reason string
	var err error
	switch job.Kind {
	case jobs.Dispatch{}.Kind(), jobs.DispatchBatch{}.Kind():
		reason = QuarantineReason(n, "request's delivery")
		var isolated int
		isolated, err = g.Engine.QuarantineQueueJob(ctx, job.ID, reason, jobs.IsolateAfterCrashes)
		if err == nil && isolated > 0 {
			log.WarnContext(ctx, "a dispatch job that crashed the process is split into isolated jobs, one per request", "requests", isolated)
			return nil
		}
	case jobs.Fanout{}.Kind():
		reason = QuarantineReason(n, "campaign's fan-out")
		var a jobs.Fanout
		if err = json.Unmarshal(job.EncodedArgs, &a); err == nil {
			err = g.Fanout.FailFanout(ctx, a.WorkspaceID, a.CampaignID, job.ID, errors.New(reason))
		}
	case jobs.WebhookDelivery{}.Kind():
		reason = QuarantineReason(n, "webhook delivery")
		var a jobs.WebhookDelivery
		if err = json.Unmarshal(job.EncodedArgs, &a); err == nil {
			err = g.Webhooks.FailWebhookDelivery(ctx, a.WorkspaceID, a.DeliveryID, job.ID, reason)
		}
	case jobs.WorkflowStep{}.Kind():
		reason = QuarantineReason(n, "workflow step")
		var a jobs.WorkflowStep
		if err = json.Unmarshal(job.EncodedArgs, &a); err == nil && g.Workflows != nil {
			err = g.Workflows.FailStep(ctx, a.WorkspaceID, a.RunID, a.Step, errors.New(reason))
		}
	case jobs.WorkflowSteps{}.Kind():
		reason = QuarantineReason(n, "workflow steps")
		var a jobs.WorkflowSteps
		if err = json.Unmarshal(job.EncodedArgs, &a); err == nil && g.Workflows != nil {
			err = g.Workflows.FailSteps(ctx, a.WorkspaceID, StepRefs(a), errors.New(reason))
		}
	default:
		reason = QuarantineReason(n, "job") // maintenance: the next period runs it again
	}
	if err != nil {
		return err // not a crash: River retries, and the next run quarantines again
	}
	log.ErrorContext(ctx, "a queue job crashed the process too often and is not run again", "reason", reason)
	return river.JobCancel(errors.New(reason))
}
