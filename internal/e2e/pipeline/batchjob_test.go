package pipeline_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/notifytest"
	"github.com/notifyd/notifyd/internal/store/sqlstore"
)

// riverState reads the state of River job id.
func riverState(t *testing.T, b *bundle, id string) string {
	t.Helper()
	var state string
	require.NoError(t, b.env.Daemon.DB.View(ctx, func(tx notify.Tx) error {
		return tx.(*sqlstore.Tx).Conn().QueryRow(ctx, `SELECT state FROM river_job WHERE id = ?`, id).Scan(&state)
	}))
	return state
}

// TestCancelInSharedQueueJob: the sends of one group commit share a queue
// job. Canceling one of them leaves the queue job to the others, which
// are still delivered; canceling every request of a queue job removes it.
func TestCancelInSharedQueueJob(t *testing.T) {
	t.Parallel()
	// No workers yet: the queue jobs wait while the cancels land.
	b := setup(t, notifytest.WithRole("api"))
	p := b.env.SimProvider(t, "vendorb_sms", "solapi", nil)
	notifytest.PutRoutes(t, b.env.Owner, notifytest.Route{Channel: "sms", ProviderAccountID: p, Priority: 1})
	bulk := func(texts ...string) []string {
		items := make([]any, len(texts))
		for i, x := range texts {
			items[i] = notifytest.SMS("01012345678", x)
		}
		r := notifytest.Signed(t, b.key, "POST", "/v1/notifications/bulk", map[string]any{"items": items})
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
		var out struct {
			Items []notifytest.Accepted `json:"items"`
		}
		require.NoError(t, r.Data(&out))
		ids := make([]string, len(out.Items))
		for i, it := range out.Items {
			ids[i] = it.RequestID
			require.Equal(t, *out.Items[0].QueueJobID, *it.QueueJobID, "one bulk send, one queue job")
		}
		return ids
	}
	cancel := func(id string) {
		r := notifytest.Signed(t, b.key, "POST", "/v1/notifications/"+id+"/cancel", nil)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	}
	shared := bulk("one", "two", "three")
	alone := bulk("four", "five")
	sharedJob, aloneJob := notifytest.Lookup(t, b.key, shared[0]).Job.QueueJobID, notifytest.Lookup(t, b.key, alone[0]).Job.QueueJobID

	cancel(shared[1])
	require.Equal(t, "available", riverState(t, b, sharedJob), "the others still need the queue job")
	cancel(alone[0])
	cancel(alone[1])
	require.Equal(t, "cancelled", riverState(t, b, aloneJob), "no request needs it any more")

	b.env.StartPeer(t, nil, notifytest.WithRole("worker"))
	require.Equal(t, "sent", notifytest.Wait(t, b.key, shared[0]).Status)
	require.Equal(t, "sent", notifytest.Wait(t, b.key, shared[2]).Status)
	got := notifytest.Lookup(t, b.key, shared[1])
	require.Equal(t, "canceled", got.Status)
	require.Empty(t, got.Attempts)
	require.Equal(t, "canceled", got.Job.Status)
	msgs := b.env.Sim.Messages("vendorb_sms", "", 0)
	require.Len(t, msgs, 2, "the canceled request is not sent")
}

// TestEventsOnlyForSubscribers: the event outbox exists for webhooks, so a
// workspace with no webhook writes no event rows; once an endpoint
// subscribes to notification.delivered, the next delivery writes one.
func TestEventsOnlyForSubscribers(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := b.env.SimProvider(t, "vendorb_sms", "solapi", nil)
	notifytest.PutRoutes(t, b.env.Owner, notifytest.Route{Channel: "sms", ProviderAccountID: p, Priority: 1})
	events := func() int {
		var n int
		require.NoError(t, b.env.Daemon.DB.View(ctx, func(tx notify.Tx) error {
			return tx.(*sqlstore.Tx).Conn().QueryRow(ctx, `SELECT COUNT(*) FROM events`).Scan(&n)
		}))
		return n
	}
	require.Equal(t, "sent", notifytest.Wait(t, b.key, notifytest.Send(t, b.key, notifytest.SMS("01012345678", "nobody listens")).RequestID).Status)
	require.Zero(t, events(), "no webhook, no event")

	r := notifytest.Dash(t, b.env.Owner, "POST", "/v1/webhooks", map[string]any{"url": "http://127.0.0.1:9/hook", "events": []string{"notification.delivered"}})
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	require.Equal(t, "sent", notifytest.Wait(t, b.key, notifytest.Send(t, b.key, notifytest.SMS("01012345678", "someone listens")).RequestID).Status)
	require.Equal(t, 1, events())
}
