package webhooks_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/jobs"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/notifytest"
	"github.com/notifyd/notifyd/internal/worker"
)

// A webhook delivery whose queue job was handed back
// jobs.QuarantineAfterCrashes times after its process died is not tried
// again: the crash guard ends it failed, with the reason in its delivery
// log, and cancels the job. One crash fewer, the job runs as usual. (The
// crash suite kills real processes for the fan-out and dispatch kinds;
// here the guard gets the job row a rescued job would carry.)
func TestQuarantinedDeliveryFails(t *testing.T) {
	t.Parallel()
	b := setup(t, fast(time.Second, time.Hour))
	b.env.SimRoute(t, "sms", "vendora_sms", nil)
	rc := notifytest.NewReceiver(t, notifytest.Always(http.StatusInternalServerError))
	h, _ := b.createWebhook(t, rc.URL, "notification.delivered")
	b.send(t, "poison", nil)
	d := b.waitDeliveries(t, h.ID, "first try failed, next in an hour", func(ds []deliveryOut) bool {
		return len(ds) == 1 && ds[0].Attempt == 1 && ds[0].NextRetryAt != nil
	})[0]
	var stored *notify.WebhookDelivery
	require.NoError(t, b.env.Daemon.DB.View(ctx, func(tx notify.Tx) (err error) {
		stored, err = tx.FindWebhookDelivery(ctx, b.env.Workspace, d.ID)
		return err
	}))
	args, err := json.Marshal(jobs.WebhookDelivery{DeliveryID: d.ID, WorkspaceID: b.env.Workspace})
	require.NoError(t, err)
	guard := &worker.CrashGuard{Engine: b.env.Daemon.Delivery, Fanout: b.env.Daemon.Rooms.Newsletter, Webhooks: b.env.Daemon.Rooms.Webhooks,
		Logger: slog.New(slog.DiscardHandler)}
	row := func(crashes int) *rivertype.JobRow {
		return &rivertype.JobRow{ID: stored.QueueJobID, Kind: jobs.WebhookDelivery{}.Kind(), EncodedArgs: args,
			Metadata: jobs.CrashMetadata(crashes)}
	}
	ran := 0
	inner := func(context.Context) error { ran++; return nil }

	require.NoError(t, guard.Work(ctx, row(jobs.QuarantineAfterCrashes-1), inner))
	require.Equal(t, 1, ran, "below the count the job runs")

	err = guard.Work(ctx, row(jobs.QuarantineAfterCrashes), inner)
	var cancel *rivertype.JobCancelError
	require.ErrorAs(t, err, &cancel)
	require.Equal(t, 1, ran, "a quarantined job does not run")
	got := b.deliveries(t, h.ID, "").Deliveries
	require.Len(t, got, 1)
	require.Equal(t, "failed", got[0].Status)
	require.NotNil(t, got[0].FinishedAt)
	require.Nil(t, got[0].NextRetryAt)
	require.NotNil(t, got[0].Error)
	require.Equal(t, worker.QuarantineReason(jobs.QuarantineAfterCrashes, "webhook delivery"), *got[0].Error)
	require.Len(t, got[0].Tries, 1, "no try is made")
	require.Equal(t, 1.0, notifytest.Counter(t, b.env.Daemon.Metrics.Registry, "notifyd_webhook_deliveries_finished_total",
		map[string]string{"outcome": "failed"}))
}
