package webhooks_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/accounts"
	"github.com/notifyd/notifyd/internal/delivery"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/notifytest"
	"github.com/notifyd/notifyd/internal/secret"
	"github.com/notifyd/notifyd/internal/usecase"
	"github.com/notifyd/notifyd/internal/webhooks"
)

// hookEnv is a service on a real store with a movable clock and a receiver.
type hookEnv struct {
	svc    *webhooks.Service
	db     notify.Store
	actor  *usecase.Actor
	offset atomic.Int64 // added to the real clock, so signatures stay checkable
	status atomic.Int64
	mu     sync.Mutex
	got    []*http.Request
	bodies [][]byte
	url    string
}

func newHookEnv(t *testing.T, schedule ...time.Duration) *hookEnv {
	t.Helper()
	e := &hookEnv{}
	e.status.Store(http.StatusOK)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		e.mu.Lock()
		e.got, e.bodies = append(e.got, r), append(e.bodies, body)
		e.mu.Unlock()
		w.WriteHeader(int(e.status.Load()))
	}))
	t.Cleanup(srv.Close)
	e.url = srv.URL
	db := notifytest.OpenDB(t, notifytest.DatabaseURL(t))
	e.db = db
	box, err := secret.NewBox(bytes.Repeat([]byte{7}, secret.KeySize))
	require.NoError(t, err)
	now := func() time.Time { return time.Now().Add(time.Duration(e.offset.Load())) }
	// The delivery engine makes the HTTP tries, to the local receiver.
	eng := delivery.New(delivery.Options{Store: db, Box: box, Now: now, WebhookAllowPrivate: true, WebhookTimeout: time.Second})
	e.svc = webhooks.New(webhooks.Options{Store: db, Box: box, Now: now, AllowPrivate: true, Schedule: schedule, Poster: eng})
	res, err := accounts.New(accounts.Options{Store: db, Box: box, Now: now}).Bootstrap(context.Background(), "W", "owner@example.com", "owner password")
	require.NoError(t, err)
	e.actor = &usecase.Actor{UserID: res.UserID, WorkspaceID: res.WorkspaceID, Role: notify.RoleOwner}
	return e
}

// event writes an outbox event, relays it and returns its one delivery.
func (e *hookEnv) event(t *testing.T, webhookID string) *notify.WebhookDelivery {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, e.db.Update(ctx, func(tx notify.Tx) error {
		return tx.CreateEvent(ctx, &notify.Event{ID: newUUID(), WorkspaceID: e.actor.WorkspaceID, Type: notify.EventFailed,
			RequestID: newUUID(), CreatedAt: e.svc.Now(), Payload: map[string]any{"status": "failed", "finalErrorCode": "x"}})
	}))
	n, err := e.svc.RelayWebhookEvents(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	p, err := e.svc.ListWebhookDeliveries(ctx, e.actor, webhookID, notify.DeliveryFilter{Limit: 1})
	require.NoError(t, err)
	return p.Deliveries[0]
}

func (e *hookEnv) last() (*http.Request, []byte) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.got[len(e.got)-1], e.bodies[len(e.bodies)-1]
}

func (e *hookEnv) requests() []*http.Request {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]*http.Request(nil), e.got...)
}

func newUUID() string {
	return strings.ToLower(secret.RandomHex(4) + "-0000-7000-8000-" + secret.RandomHex(6))
}

func verifies(t *testing.T, secretStr string, r *http.Request, body []byte) bool {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secretStr)
	require.NoError(t, err)
	lib := wh.VerifyIgnoringTimestamp(body, r.Header) == nil
	ours := client.VerifyWebhook(secretStr, r.Header, body, 48*time.Hour) == nil
	require.Equal(t, lib, ours, "our verifier agrees with the Standard Webhooks library")
	return lib
}

// Rotation with the service clock moved past the 24-hour overlap.
func TestWebhookRotationClock(t *testing.T) {
	t.Parallel()
	e := newHookEnv(t)
	ctx := context.Background()
	events := []string{notify.EventFailed}
	h, err := e.svc.CreateWebhook(ctx, e.actor, webhooks.WebhookInput{URL: &e.url, Events: &events})
	require.NoError(t, err)
	oldSecret := h.Secret

	d := e.event(t, h.Webhook.ID)
	wait, err := e.svc.DeliverWebhook(ctx, e.actor.WorkspaceID, d.ID, d.QueueJobID)
	require.NoError(t, err)
	require.Zero(t, wait)
	r, body := e.last()
	require.True(t, verifies(t, oldSecret, r, body))
	require.Len(t, strings.Fields(r.Header.Get("webhook-signature")), 1)

	newSecret, err := e.svc.RotateWebhookSecret(ctx, e.actor, h.Webhook.ID)
	require.NoError(t, err)
	e.offset.Store(int64(24*time.Hour - time.Minute))
	d = e.event(t, h.Webhook.ID)
	_, err = e.svc.DeliverWebhook(ctx, e.actor.WorkspaceID, d.ID, d.QueueJobID)
	require.NoError(t, err)
	r, body = e.last()
	require.Len(t, strings.Fields(r.Header.Get("webhook-signature")), 2)
	require.True(t, verifies(t, newSecret, r, body))
	require.True(t, verifies(t, oldSecret, r, body))

	e.offset.Store(int64(24*time.Hour + time.Second))
	d = e.event(t, h.Webhook.ID)
	_, err = e.svc.DeliverWebhook(ctx, e.actor.WorkspaceID, d.ID, d.QueueJobID)
	require.NoError(t, err)
	r, body = e.last()
	require.Len(t, strings.Fields(r.Header.Get("webhook-signature")), 1)
	require.True(t, verifies(t, newSecret, r, body))
	require.False(t, verifies(t, oldSecret, r, body))
}

// The waits follow the schedule with at most 10% jitter; after it the
// delivery fails; a stale job (another job id) does nothing.
func TestWebhookSchedule(t *testing.T) {
	t.Parallel()
	e := newHookEnv(t, time.Second, time.Hour)
	e.status.Store(http.StatusBadGateway)
	ctx := context.Background()
	events := []string{notify.EventFailed}
	h, err := e.svc.CreateWebhook(ctx, e.actor, webhooks.WebhookInput{URL: &e.url, Events: &events})
	require.NoError(t, err)
	d := e.event(t, h.Webhook.ID)

	wait, err := e.svc.DeliverWebhook(ctx, e.actor.WorkspaceID, d.ID, d.QueueJobID+1)
	require.NoError(t, err)
	require.Zero(t, wait)
	require.Empty(t, e.requests(), "a stale job makes no try")

	wait, err = e.svc.DeliverWebhook(ctx, e.actor.WorkspaceID, d.ID, d.QueueJobID)
	require.NoError(t, err)
	require.InDelta(t, float64(time.Second), float64(wait), float64(100*time.Millisecond))
	wait, err = e.svc.DeliverWebhook(ctx, e.actor.WorkspaceID, d.ID, d.QueueJobID)
	require.NoError(t, err)
	require.InDelta(t, float64(time.Hour), float64(wait), float64(6*time.Minute))
	wait, err = e.svc.DeliverWebhook(ctx, e.actor.WorkspaceID, d.ID, d.QueueJobID)
	require.NoError(t, err)
	require.Zero(t, wait, "the schedule is spent")
	p, err := e.svc.ListWebhookDeliveries(ctx, e.actor, h.Webhook.ID, notify.DeliveryFilter{})
	require.NoError(t, err)
	got := p.Deliveries[0]
	require.Equal(t, notify.DeliveryFailed, got.Status)
	require.Equal(t, 3, got.Attempts)
	require.Len(t, got.Tries, 3)
	require.Equal(t, 502, *got.LastHTTPStatus)
	require.Len(t, e.requests(), 3)
	for _, r := range e.requests() {
		require.Equal(t, d.ID, r.Header.Get("webhook-id"))
	}
}
