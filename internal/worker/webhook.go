package worker

import (
	"context"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/notifyd/notifyd/internal/jobs"
)

// WebhookService is the use cases of the webhook jobs.
type WebhookService interface {
	RelayWebhookEvents(ctx context.Context) (int, error)
	PruneWebhookHistory(ctx context.Context) (events, deliveries int, err error)
	DeliverWebhook(ctx context.Context, workspaceID, deliveryID string, jobID int64) (time.Duration, error)
}

// WebhookRelayInterval is how often the relay looks for new events when
// none is given.
const WebhookRelayInterval = 200 * time.Millisecond

// webhookPruneInterval is how often old webhook history is deleted.
const webhookPruneInterval = 10 * time.Minute

// StartWebhookRelay polls the event outbox every interval and turns new
// events into deliveries, until the returned stop function is called
// (which waits for a pass in progress). A pass that finds nothing is one
// indexed read. Every 10 minutes it also prunes old webhook history. Every worker node runs one: deliveries are unique per
// (endpoint, event), so concurrent passes create each delivery once.
func StartWebhookRelay(svc WebhookService, logger *slog.Logger, interval time.Duration) (stop func()) {
	if interval <= 0 {
		interval = WebhookRelayInterval
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(interval)
		defer t.Stop()
		pruned := time.Now() // the first prune waits an interval: start-up stays light
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if _, err := svc.RelayWebhookEvents(ctx); err != nil && ctx.Err() == nil {
				logger.Warn("webhook relay", "err", err)
			}
			if time.Since(pruned) >= webhookPruneInterval {
				pruned = time.Now()
				if _, _, err := svc.PruneWebhookHistory(ctx); err != nil && ctx.Err() == nil {
					logger.Warn("webhook history prune", "err", err)
				}
			}
		}
	}()
	return func() { cancel(); <-done }
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
