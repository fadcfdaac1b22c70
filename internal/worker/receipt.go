package worker

import (
	"context"
	"time"

	"github.com/riverqueue/river"

	"github.com/notifyd/notifyd/internal/jobs"
)

// ReceiptService is the use case of the receipt poll jobs.
type ReceiptService interface {
	// Poll looks a receipt up once and answers the wait before the next
	// lookup, zero when it is final.
	Poll(ctx context.Context, workspaceID, attemptID string) (time.Duration, error)
}

// ReceiptPoll polls one delivery receipt (issue 35). The room keeps the
// schedule; a further lookup is a snooze, which River does not count as
// an attempt, so River's attempts only cover unexpected errors.
type ReceiptPoll struct {
	river.WorkerDefaults[jobs.ReceiptPoll]
	Service ReceiptService
}

// Work implements river.Worker.
func (w *ReceiptPoll) Work(ctx context.Context, job *river.Job[jobs.ReceiptPoll]) error {
	wait, err := w.Service.Poll(ctx, job.Args.WorkspaceID, job.Args.AttemptID)
	if err != nil {
		return err
	}
	if wait > 0 {
		return river.JobSnooze(wait)
	}
	return nil
}

// Timeout bounds one lookup: a vendor call and two short transactions.
func (w *ReceiptPoll) Timeout(*river.Job[jobs.ReceiptPoll]) time.Duration { return time.Minute }
