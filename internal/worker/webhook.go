package worker

import (
	"context"
	"time"

	"github.com/riverqueue/river"

	"github.com/notifyd/notifyd/internal/jobs"
)

// WebhookService is the use cases of the webhook jobs.
type WebhookService interface {
	RelayWebhookEvents(ctx context.Context) (int, error)
	DeliverWebhook(ctx context.Context, workspaceID, deliveryID string, jobID int64) (time.Duration, error)
}

// WebhookRelay turns outbox events into deliveries.
type WebhookRelay struct {
	river.WorkerDefaults[jobs.WebhookRelay]
	Service WebhookService
}

// Work implements river.Worker.
func (w *WebhookRelay) Work(ctx context.Context, _ *river.Job[jobs.WebhookRelay]) error {
	_, err := w.Service.RelayWebhookEvents(ctx)
	return err
}

// WebhookDelivery makes the tries of one delivery. The service keeps the
// retry schedule; a retry is a snooze, which River does not count as an
// attempt, so River's attempts only cover unexpected errors.
type WebhookDelivery struct {
	river.WorkerDefaults[jobs.WebhookDelivery]
	Service WebhookService
	// TryTimeout is the webhook timeout; a run is bounded a little above it.
	TryTimeout time.Duration
	// MaxTimeout, when set, caps the run bound (it must stay below River's
	// RescueStuckJobsAfter).
	MaxTimeout time.Duration
}

// Work implements river.Worker.
func (w *WebhookDelivery) Work(ctx context.Context, job *river.Job[jobs.WebhookDelivery]) error {
	wait, err := w.Service.DeliverWebhook(ctx, job.Args.WorkspaceID, job.Args.DeliveryID, job.ID)
	if err != nil {
		return err
	}
	if wait > 0 {
		return river.JobSnooze(wait)
	}
	return nil
}

// Timeout leaves room for the two short transactions around the try.
func (w *WebhookDelivery) Timeout(*river.Job[jobs.WebhookDelivery]) time.Duration {
	d := w.TryTimeout + 30*time.Second
	if w.MaxTimeout > 0 {
		d = min(d, w.MaxTimeout)
	}
	return d
}
