package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/store"
)

func testWebhooks(t *testing.T, db *store.DB) {
	ws1, ws2 := Workspace(t, db), Workspace(t, db)
	w := &notify.Webhook{ID: id(), WorkspaceID: ws1, URL: "https://a.example/hook", Events: []string{notify.EventDelivered},
		Enabled: true, SecretEnc: "sealed-1", CreatedAt: t0, UpdatedAt: t0}
	w2 := &notify.Webhook{ID: id(), WorkspaceID: ws1, URL: "https://b.example/hook", Events: notify.EventTypes,
		Enabled: false, SecretEnc: "sealed-2", CreatedAt: t0.Add(time.Second), UpdatedAt: t0.Add(time.Second)}
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.NoError(t, tx.CreateWebhook(ctx, w))
		return tx.CreateWebhook(ctx, w2)
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.FindWebhook(ctx, ws1, w.ID)
		require.NoError(t, err)
		require.Equal(t, w, got)
		_, err = tx.FindWebhook(ctx, ws2, w.ID)
		require.ErrorIs(t, err, notify.ErrNotFound, "another workspace's webhook")
		all, err := tx.FindWebhooks(ctx, ws1)
		require.NoError(t, err)
		require.Equal(t, []*notify.Webhook{w, w2}, all)
		none, err := tx.FindWebhooks(ctx, ws2)
		require.NoError(t, err)
		require.Empty(t, none)
		return nil
	})

	// A rotation keeps the previous secret with its expiry.
	until := t0.Add(24 * time.Hour)
	w.PreviousSecretEnc, w.PreviousExpiresAt, w.SecretEnc, w.Enabled, w.UpdatedAt = w.SecretEnc, &until, "sealed-3", false, t0.Add(time.Minute)
	update(t, db, func(ctx context.Context, tx notify.Tx) error { return tx.UpdateWebhook(ctx, w) })
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.FindWebhook(ctx, ws1, w.ID)
		require.NoError(t, err)
		require.Equal(t, w, got)
		return nil
	})
	other := *w
	other.WorkspaceID = ws2
	err := db.Update(context.Background(), func(tx notify.Tx) error { return tx.UpdateWebhook(context.Background(), &other) })
	require.ErrorIs(t, err, notify.ErrNotFound)
	err = db.Update(context.Background(), func(tx notify.Tx) error { return tx.DeleteWebhook(context.Background(), ws2, w.ID) })
	require.ErrorIs(t, err, notify.ErrNotFound)
	update(t, db, func(ctx context.Context, tx notify.Tx) error { return tx.DeleteWebhook(ctx, ws1, w2.ID) })
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		_, err := tx.FindWebhook(ctx, ws1, w2.ID)
		require.ErrorIs(t, err, notify.ErrNotFound)
		return nil
	})
}

// hookOutbox makes a workspace with an enabled endpoint for every event
// type.
func hookOutbox(t *testing.T, db *store.DB) (string, *notify.Webhook) {
	t.Helper()
	ws := Workspace(t, db)
	w := &notify.Webhook{ID: id(), WorkspaceID: ws, URL: "https://a.example/hook", Events: notify.EventTypes,
		Enabled: true, SecretEnc: "sealed", CreatedAt: t0, UpdatedAt: t0}
	update(t, db, func(ctx context.Context, tx notify.Tx) error { return tx.CreateWebhook(ctx, w) })
	return ws, w
}

// twoEvents stores a delivered event of one workspace at t0 and, written
// first, a failed one of another a millisecond later.
func twoEvents(t *testing.T, db *store.DB) (e1, e2 *notify.Event) {
	t.Helper()
	e1 = &notify.Event{ID: id(), WorkspaceID: Workspace(t, db), Type: notify.EventDelivered, RequestID: id(), CreatedAt: t0,
		Payload: map[string]any{"status": "sent"}}
	e2 = &notify.Event{ID: id(), WorkspaceID: Workspace(t, db), Type: notify.EventFailed, RequestID: id(), CreatedAt: t0.Add(time.Millisecond),
		Payload: map[string]any{"status": "failed"}}
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.NoError(t, tx.CreateEvent(ctx, e2))
		return tx.CreateEvent(ctx, e1)
	})
	return e1, e2
}

// newHookDelivery is a pending delivery of w for an event of its own,
// created at.
func newHookDelivery(w *notify.Webhook, at time.Time) *notify.WebhookDelivery {
	return &notify.WebhookDelivery{ID: id(), WorkspaceID: w.WorkspaceID, WebhookID: w.ID, EventID: id(), EventType: notify.EventDelivered,
		RequestID: id(), Body: `{"type":"notification.delivered"}`, Status: notify.DeliveryPending,
		NextAttemptAt: &at, CreatedAt: at, UpdatedAt: at}
}

// hookDelivery stores newHookDelivery(w, at) with its queue job.
func hookDelivery(t *testing.T, db *store.DB, w *notify.Webhook, at time.Time) *notify.WebhookDelivery {
	t.Helper()
	d := newHookDelivery(w, at)
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		_, err := tx.CreateWebhookDelivery(ctx, d)
		return err
	})
	return d
}

// hookTries logs three tries of d: a 500, a timeout and a 200.
func hookTries(t *testing.T, db *store.DB, d *notify.WebhookDelivery) []*notify.WebhookTry {
	t.Helper()
	s500, s200 := 500, 200
	tries := []*notify.WebhookTry{
		{ID: id(), DeliveryID: d.ID, Attempt: 1, HTTPStatus: &s500, Error: "HTTP 500", DurationMS: 12, Response: "oops", CreatedAt: t0},
		{ID: id(), DeliveryID: d.ID, Attempt: 2, Error: "timeout after 10s", DurationMS: 10000, CreatedAt: t0.Add(5 * time.Second)},
		{ID: id(), DeliveryID: d.ID, Attempt: 3, HTTPStatus: &s200, DurationMS: 3, CreatedAt: t0.Add(time.Minute)},
	}
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		for _, tr := range tries {
			require.NoError(t, tx.CreateWebhookTry(ctx, d.WorkspaceID, tr))
		}
		return nil
	})
	return tries
}

// delivered stores d's latest outcome: delivered on the third try.
func delivered(t *testing.T, db *store.DB, d *notify.WebhookDelivery) {
	t.Helper()
	s200, fin := 200, t0.Add(time.Minute)
	d.Status, d.Attempts, d.RunAttempts, d.LastHTTPStatus, d.NextAttemptAt, d.FinishedAt, d.UpdatedAt =
		notify.DeliveryDelivered, 3, 3, &s200, nil, &fin, fin
	update(t, db, func(ctx context.Context, tx notify.Tx) error { return tx.UpdateWebhookDelivery(ctx, d, false) })
}

// testWebhookOutbox: the outbox events, the deliveries they become and
// the tries of each.
func testWebhookOutbox(t *testing.T, open Opener) {
	runVerbs(t, open, []verb{
		{"PendingEvents", testPendingEvents, allWorkspaces},
		{"MarkEventsDispatched", testMarkEventsDispatched, allWorkspaces},
		{"CreateWebhookDelivery", testCreateWebhookDelivery, perWorkspace},
		{"FindWebhookDelivery", testFindWebhookDelivery, perWorkspace},
		{"CreateWebhookTry", testCreateWebhookTry, perWorkspace},
		{"FindWebhookDeliveries", testFindWebhookDeliveries, perWorkspace},
		{"UpdateWebhookDelivery", testUpdateWebhookDelivery, perWorkspace},
		{"LockWebhookDelivery", testLockWebhookDelivery, perWorkspace},
		{"PruneWebhookHistory", testPruneWebhookHistory, allWorkspaces},
		{"DeleteWebhook", testDeleteWebhookCascade, perWorkspace},
	})
}

func testPendingEvents(t *testing.T, db *store.DB) {
	e1, _ := twoEvents(t, db)
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		evs, err := tx.PendingEvents(ctx, 10)
		require.NoError(t, err)
		require.Len(t, evs, 2)
		require.Equal(t, e1.ID, evs[0].ID, "oldest first")
		require.Equal(t, notify.EventDelivered, evs[0].Type)
		require.Equal(t, e1.RequestID, evs[0].RequestID)
		require.Equal(t, t0, evs[0].CreatedAt)
		require.JSONEq(t, `{"status":"sent"}`, evs[0].PayloadJSON)
		one, err := tx.PendingEvents(ctx, 1)
		require.NoError(t, err)
		require.Len(t, one, 1)
		return nil
	})
}

func testMarkEventsDispatched(t *testing.T, db *store.DB) {
	e1, e2 := twoEvents(t, db)
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		return tx.MarkEventsDispatched(ctx, []string{e1.ID, e2.ID}, t0.Add(time.Second))
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		evs, err := tx.PendingEvents(ctx, 10)
		require.NoError(t, err)
		require.Empty(t, evs)
		return nil
	})
}

func testCreateWebhookDelivery(t *testing.T, db *store.DB) {
	_, w := hookOutbox(t, db)
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		d := newHookDelivery(w, t0)
		ok, err := tx.CreateWebhookDelivery(ctx, d)
		require.NoError(t, err)
		require.True(t, ok)
		require.NotZero(t, d.QueueJobID, "its queue job is inserted in the same transaction")
		dup := *d
		dup.ID, dup.QueueJobID = id(), 0
		ok, err = tx.CreateWebhookDelivery(ctx, &dup)
		require.NoError(t, err)
		require.False(t, ok, "one delivery per endpoint and event")
		require.Zero(t, dup.QueueJobID, "a duplicate leaves no job behind")
		return nil
	})
}

func testFindWebhookDelivery(t *testing.T, db *store.DB) {
	ws, w := hookOutbox(t, db)
	ws2 := Workspace(t, db)
	d := hookDelivery(t, db, w, t0)
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.FindWebhookDelivery(ctx, ws, d.ID)
		require.NoError(t, err)
		require.Equal(t, d, got)
		_, err = tx.FindWebhookDelivery(ctx, ws2, d.ID)
		require.ErrorIs(t, err, notify.ErrNotFound, "another workspace's delivery")
		return nil
	})
}

func testCreateWebhookTry(t *testing.T, db *store.DB) {
	ws, w := hookOutbox(t, db)
	d := hookDelivery(t, db, w, t0)
	tries := hookTries(t, db, d)
	hookDelivery(t, db, w, t0.Add(time.Hour))
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		page, err := tx.FindWebhookDeliveries(ctx, ws, w.ID, notify.DeliveryFilter{Limit: 10})
		require.NoError(t, err)
		require.Len(t, page, 2)
		require.Empty(t, page[0].Tries)
		require.Equal(t, tries, page[1].Tries, "every try, oldest first")
		return nil
	})
}

func testFindWebhookDeliveries(t *testing.T, db *store.DB) {
	ws, w := hookOutbox(t, db)
	ws2 := Workspace(t, db)
	d := hookDelivery(t, db, w, t0)
	delivered(t, db, d)
	d2 := hookDelivery(t, db, w, t0.Add(time.Hour))
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		page, err := tx.FindWebhookDeliveries(ctx, ws, w.ID, notify.DeliveryFilter{Limit: 1})
		require.NoError(t, err)
		require.Len(t, page, 1)
		require.Equal(t, d2.ID, page[0].ID, "newest first")
		page, err = tx.FindWebhookDeliveries(ctx, ws, w.ID, notify.DeliveryFilter{Limit: 10,
			Before: &notify.Cursor{At: d2.CreatedAt, ID: d2.ID}})
		require.NoError(t, err)
		require.Len(t, page, 1)
		require.Equal(t, d.ID, page[0].ID)
		require.Equal(t, notify.DeliveryDelivered, page[0].Status)
		none, err := tx.FindWebhookDeliveries(ctx, ws2, w.ID, notify.DeliveryFilter{Limit: 10})
		require.NoError(t, err)
		require.Empty(t, none)
		return nil
	})
}

func testUpdateWebhookDelivery(t *testing.T, db *store.DB) {
	ws, w := hookOutbox(t, db)
	d := hookDelivery(t, db, w, t0)
	oldJob := d.QueueJobID
	delivered(t, db, d)
	require.Equal(t, oldJob, d.QueueJobID)
	// A requeue replaces the queue job.
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		d.Status, d.RunAttempts, d.FinishedAt = notify.DeliveryPending, 0, nil
		return tx.UpdateWebhookDelivery(ctx, d, true)
	})
	require.NotEqual(t, oldJob, d.QueueJobID)
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.FindWebhookDelivery(ctx, ws, d.ID)
		require.NoError(t, err)
		require.Equal(t, d.QueueJobID, got.QueueJobID)
		require.Equal(t, notify.DeliveryPending, got.Status)
		require.Nil(t, got.FinishedAt)
		return nil
	})
}

func testLockWebhookDelivery(t *testing.T, db *store.DB) {
	ws, w := hookOutbox(t, db)
	ws2 := Workspace(t, db)
	d := hookDelivery(t, db, w, t0)
	// Only the workspace's own delivery.
	update(t, db, func(ctx context.Context, tx notify.Tx) error { return tx.LockWebhookDelivery(ctx, ws, d.ID) })
	err := db.Update(context.Background(), func(tx notify.Tx) error { return tx.LockWebhookDelivery(context.Background(), ws2, d.ID) })
	require.ErrorIs(t, err, notify.ErrNotFound)
}

// testPruneWebhookHistory: dispatched events and finished deliveries
// past the cutoffs go.
func testPruneWebhookHistory(t *testing.T, db *store.DB) {
	e1, e2 := twoEvents(t, db)
	ws, w := hookOutbox(t, db)
	d := hookDelivery(t, db, w, t0) // pending: kept
	d2 := hookDelivery(t, db, w, t0.Add(time.Hour))
	e3 := &notify.Event{ID: id(), WorkspaceID: ws, Type: notify.EventCanceled, RequestID: id(), CreatedAt: t0.Add(time.Hour), Payload: map[string]any{}}
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.NoError(t, tx.MarkEventsDispatched(ctx, []string{e1.ID, e2.ID}, t0.Add(time.Second)))
		require.NoError(t, tx.CreateEvent(ctx, e3)) // not dispatched: kept
		d2.Status, d2.FinishedAt, d2.UpdatedAt = notify.DeliveryFailed, &t0, t0
		return tx.UpdateWebhookDelivery(ctx, d2, false)
	})
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		ev, dv, err := tx.PruneWebhookHistory(ctx, t0, t0, 10)
		require.NoError(t, err)
		require.Zero(t, ev, "dispatched at t0+1s: not before t0")
		require.Zero(t, dv)
		ev, dv, err = tx.PruneWebhookHistory(ctx, t0.Add(time.Hour), t0.Add(time.Second), 1)
		require.NoError(t, err)
		require.Equal(t, 1, ev, "bounded by limit")
		require.Equal(t, 1, dv, "the finished one; the pending one stays")
		ev, _, err = tx.PruneWebhookHistory(ctx, t0.Add(time.Hour), t0.Add(time.Second), 10)
		require.NoError(t, err)
		require.Equal(t, 1, ev)
		return nil
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		evs, err := tx.PendingEvents(ctx, 10)
		require.NoError(t, err)
		require.Len(t, evs, 1)
		require.Equal(t, e3.ID, evs[0].ID)
		_, err = tx.FindWebhookDelivery(ctx, ws, d2.ID)
		require.ErrorIs(t, err, notify.ErrNotFound)
		_, err = tx.FindWebhookDelivery(ctx, ws, d.ID)
		require.NoError(t, err)
		return nil
	})
}

// testDeleteWebhookCascade: deleting the endpoint removes its deliveries
// and tries.
func testDeleteWebhookCascade(t *testing.T, db *store.DB) {
	ws, w := hookOutbox(t, db)
	d := hookDelivery(t, db, w, t0)
	hookTries(t, db, d)
	update(t, db, func(ctx context.Context, tx notify.Tx) error { return tx.DeleteWebhook(ctx, ws, w.ID) })
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		_, err := tx.FindWebhookDelivery(ctx, ws, d.ID)
		require.ErrorIs(t, err, notify.ErrNotFound)
		return nil
	})
}
