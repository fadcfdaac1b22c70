// Package webhooks is the room of outbound webhooks: endpoints and their
// secrets (with rotation overlap), the outbox relay that turns committed
// events into deliveries, each signed try (Standard Webhooks) with its
// retry schedule, the delivery log and redelivery. The HTTP exchange
// itself is the delivery engine's (the Poster port: SSRF guard, no
// redirects, the timeout); tries and outcomes are counted through the
// Metrics port.
package webhooks

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"log/slog"
	mrand "math/rand/v2"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/secret"
	"github.com/notifyd/notifyd/internal/usecase"
)

// Poster makes one HTTP try of a signed webhook delivery (the delivery
// engine: SSRF guard, no redirects, the webhook timeout).
type Poster interface {
	PostWebhook(ctx context.Context, p notify.WebhookPost) notify.WebhookPostResult
}

// Metrics counts tries (by HTTP status, 0 for none, and seconds) and
// finished deliveries (by outcome: delivered, failed).
type Metrics interface {
	Try(status int, seconds float64)
	Finish(outcome string)
}

// Options are what the room is built with.
type Options struct {
	Store  notify.Store
	Box    *secret.Box // seals and opens the endpoints' secrets
	Now    func() time.Time
	Logger *slog.Logger
	// Poster makes the HTTP tries; nil fails every try.
	Poster Poster
	// AllowPrivate (NOTIFYD_ALLOW_PRIVATE_TARGETS) also admits http:// URLs.
	AllowPrivate bool
	// Schedule is the wait before each retry; after the last one the
	// delivery fails. Default DefaultSchedule.
	Schedule []time.Duration
	// SecretOverlap is how long the previous secret keeps signing after a
	// rotation; default 24h.
	SecretOverlap time.Duration
	// Metrics of tries and finished deliveries; nil records nothing.
	Metrics Metrics
}

// DefaultSchedule is the Standard Webhooks (Svix) retry schedule:
// with the immediate first try, 8 tries over about 27 hours.
var DefaultSchedule = []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute,
	2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour}

// Service is the webhooks room.
type Service struct {
	usecase.Kit
	box *secret.Box
	wh  Options
}

// New builds the room.
func New(o Options) *Service {
	if o.Schedule == nil {
		o.Schedule = DefaultSchedule
	}
	if o.SecretOverlap <= 0 {
		o.SecretOverlap = 24 * time.Hour
	}
	if o.Metrics == nil {
		o.Metrics = noMetrics{}
	}
	return &Service{Kit: usecase.NewKit(o.Store, o.Now, o.Logger), box: o.Box, wh: o}
}

type noMetrics struct{}

func (noMetrics) Try(int, float64) {}
func (noMetrics) Finish(string)    {}

// WebhookInput is the body of create and update; nil means absent.
type WebhookInput struct {
	URL     *string
	Events  *[]string
	Enabled *bool
}

// NewWebhook is a created webhook with its secret, shown once.
type NewWebhook struct {
	Webhook *notify.Webhook
	Secret  string
}

// DeliveryPage is one page of a webhook's delivery log.
type DeliveryPage struct {
	Deliveries []*notify.WebhookDelivery
	Cursor     *notify.Cursor
	HasNext    bool
}

const maxWebhookURL = 2048

func (s *Service) validateWebhookInput(in WebhookInput, create bool) error {
	if create && in.URL == nil {
		return notify.Invalid("url is required")
	}
	if in.URL != nil {
		if err := s.checkWebhookURL(*in.URL); err != nil {
			return err
		}
	}
	if create && in.Events == nil {
		return notify.Invalid("events is required")
	}
	if in.Events != nil {
		if len(*in.Events) == 0 {
			return notify.Invalid("events must hold at least one event")
		}
		for _, e := range *in.Events {
			if !slices.Contains(notify.WebhookEventTypes, e) {
				return notify.Invalid("events must be among %s", strings.Join(notify.WebhookEventTypes, ", "))
			}
		}
	}
	return nil
}

// checkWebhookURL admits absolute https URLs, and http ones too when
// private targets are allowed (a receiver on the local network rarely has
// a certificate). The address itself is checked at delivery, by the
// guarded dialer, so DNS changes cannot route around it.
func (s *Service) checkWebhookURL(raw string) error {
	want := "url must be an absolute https URL"
	if s.wh.AllowPrivate {
		want = "url must be an absolute http or https URL"
	}
	if raw == "" || len(raw) > maxWebhookURL || !usecase.Storable(raw) {
		return notify.Invalid("url must be 1 to %d characters", maxWebhookURL)
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Hostname() == "" || u.Opaque != "" {
		return notify.Invalid("%s", want)
	}
	if u.User != nil {
		return notify.Invalid("url must not hold credentials")
	}
	switch u.Scheme {
	case "https":
	case "http":
		if !s.wh.AllowPrivate {
			return notify.Invalid("%s", want)
		}
	default:
		return notify.Invalid("%s", want)
	}
	return nil
}

// newWebhookSecret is "whsec_" + base64 of 24 random bytes.
func newWebhookSecret() string {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return "whsec_" + base64.StdEncoding.EncodeToString(b)
}

// CreateWebhook registers an endpoint (audit webhook.create).
func (s *Service) CreateWebhook(ctx context.Context, a *usecase.Actor, in WebhookInput) (*NewWebhook, error) {
	if err := usecase.RequireWorkspace(a); err != nil {
		return nil, err
	}
	if err := s.validateWebhookInput(in, true); err != nil {
		return nil, err
	}
	now := s.Now()
	w := &notify.Webhook{ID: usecase.NewID(), WorkspaceID: a.WorkspaceID, URL: *in.URL, Events: usecase.Dedupe(*in.Events), Enabled: true,
		CreatedAt: now, UpdatedAt: now}
	if in.Enabled != nil {
		w.Enabled = *in.Enabled
	}
	sec := newWebhookSecret()
	enc, err := s.box.SealFor(notify.SealedAAD(notify.SealedWebhookSecret, w.ID), []byte(sec))
	if err != nil {
		return nil, err
	}
	w.SecretEnc = enc
	err = s.Store.Update(ctx, func(tx notify.Tx) error {
		if err := tx.CreateWebhook(ctx, w); err != nil {
			return err
		}
		return s.Audit(ctx, tx, a, a.WorkspaceID, "webhook.create", "webhook", w.ID,
			map[string]any{"url": w.URL, "events": w.Events, "enabled": w.Enabled})
	})
	if err != nil {
		return nil, err
	}
	return &NewWebhook{Webhook: w, Secret: sec}, nil
}

// ListWebhooks lists the workspace's endpoints (never their secrets).
func (s *Service) ListWebhooks(ctx context.Context, a *usecase.Actor) ([]*notify.Webhook, error) {
	if err := usecase.RequireWorkspace(a); err != nil {
		return nil, err
	}
	var out []*notify.Webhook
	err := s.Store.View(ctx, func(tx notify.Tx) (err error) {
		out, err = tx.FindWebhooks(ctx, a.WorkspaceID)
		return err
	})
	return out, err
}

// findWebhook loads an endpoint of the actor's workspace; a malformed id is
// as unknown as a missing one.
func findWebhook(ctx context.Context, tx notify.Tx, workspaceID, id string) (*notify.Webhook, error) {
	if !usecase.IsUUID(id) {
		return nil, notify.NotFound("Webhook")
	}
	w, err := tx.FindWebhook(ctx, workspaceID, id)
	return w, usecase.NotFound(err, "Webhook")
}

// GetWebhook reads one endpoint of the actor's workspace (never its
// secret); another workspace's is 404.
func (s *Service) GetWebhook(ctx context.Context, a *usecase.Actor, id string) (*notify.Webhook, error) {
	if err := usecase.RequireWorkspace(a); err != nil {
		return nil, err
	}
	var w *notify.Webhook
	err := s.Store.View(ctx, func(tx notify.Tx) (err error) {
		w, err = findWebhook(ctx, tx, a.WorkspaceID, id)
		return err
	})
	return w, err
}

// UpdateWebhook changes url, events or enabled (audit webhook.update).
func (s *Service) UpdateWebhook(ctx context.Context, a *usecase.Actor, id string, in WebhookInput) (*notify.Webhook, error) {
	if err := usecase.RequireWorkspace(a); err != nil {
		return nil, err
	}
	if err := s.validateWebhookInput(in, false); err != nil {
		return nil, err
	}
	var w *notify.Webhook
	err := s.Store.Update(ctx, func(tx notify.Tx) (err error) {
		if w, err = findWebhook(ctx, tx, a.WorkspaceID, id); err != nil {
			return err
		}
		changes := map[string]any{}
		if in.URL != nil {
			w.URL, changes["url"] = *in.URL, *in.URL
		}
		if in.Events != nil {
			w.Events = usecase.Dedupe(*in.Events)
			changes["events"] = w.Events
		}
		if in.Enabled != nil {
			w.Enabled, changes["enabled"] = *in.Enabled, *in.Enabled
		}
		w.UpdatedAt = s.Now()
		if err := tx.UpdateWebhook(ctx, w); err != nil {
			return err
		}
		return s.Audit(ctx, tx, a, a.WorkspaceID, "webhook.update", "webhook", w.ID, changes)
	})
	if err != nil {
		return nil, err
	}
	return w, nil
}

// DeleteWebhook removes an endpoint and its delivery log (audit webhook.delete).
func (s *Service) DeleteWebhook(ctx context.Context, a *usecase.Actor, id string) error {
	if err := usecase.RequireWorkspace(a); err != nil {
		return err
	}
	return s.Store.Update(ctx, func(tx notify.Tx) error {
		w, err := findWebhook(ctx, tx, a.WorkspaceID, id)
		if err != nil {
			return err
		}
		if err := tx.DeleteWebhook(ctx, a.WorkspaceID, id); err != nil {
			return err
		}
		return s.Audit(ctx, tx, a, a.WorkspaceID, "webhook.delete", "webhook", id, map[string]any{"url": w.URL})
	})
}

// RotateWebhookSecret issues a new secret (audit webhook.rotate_secret).
// The old one keeps signing beside it for SecretOverlap, so receivers can
// switch without losing deliveries; a second rotation within that window
// retires the oldest secret at once.
func (s *Service) RotateWebhookSecret(ctx context.Context, a *usecase.Actor, id string) (string, error) {
	if err := usecase.RequireWorkspace(a); err != nil {
		return "", err
	}
	sec := newWebhookSecret()
	err := s.Store.Update(ctx, func(tx notify.Tx) error {
		w, err := findWebhook(ctx, tx, a.WorkspaceID, id)
		if err != nil {
			return err
		}
		enc, err := s.box.SealFor(notify.SealedAAD(notify.SealedWebhookSecret, w.ID), []byte(sec))
		if err != nil {
			return err
		}
		now := s.Now()
		until := now.Add(s.wh.SecretOverlap)
		w.PreviousSecretEnc, w.PreviousExpiresAt, w.SecretEnc, w.UpdatedAt = w.SecretEnc, &until, enc, now
		if err := tx.UpdateWebhook(ctx, w); err != nil {
			return err
		}
		return s.Audit(ctx, tx, a, a.WorkspaceID, "webhook.rotate_secret", "webhook", w.ID,
			map[string]any{"previousSecretValidUntil": until.Format(time.RFC3339)})
	})
	if err != nil {
		return "", err
	}
	return sec, nil
}

// ListWebhookDeliveries pages an endpoint's delivery log, newest first.
func (s *Service) ListWebhookDeliveries(ctx context.Context, a *usecase.Actor, id string, f notify.DeliveryFilter) (*DeliveryPage, error) {
	if err := usecase.RequireWorkspace(a); err != nil {
		return nil, err
	}
	if f.Limit == 0 {
		f.Limit = 100
	}
	if f.Limit < 1 || f.Limit > 200 {
		return nil, notify.Invalid("limit must be between 1 and 200")
	}
	want := f.Limit
	f.Limit++
	p := &DeliveryPage{}
	err := s.Store.View(ctx, func(tx notify.Tx) error {
		if _, err := findWebhook(ctx, tx, a.WorkspaceID, id); err != nil {
			return err
		}
		var err error
		p.Deliveries, err = tx.FindWebhookDeliveries(ctx, a.WorkspaceID, id, f)
		return err
	})
	if err != nil {
		return nil, err
	}
	if p.Deliveries == nil {
		p.Deliveries = []*notify.WebhookDelivery{}
	}
	p.Deliveries, p.Cursor, p.HasNext = usecase.Trim(p.Deliveries, want, func(d *notify.WebhookDelivery) notify.Cursor {
		return notify.Cursor{At: d.CreatedAt, ID: d.ID}
	})
	return p, nil
}

// RedeliverWebhook queues a delivery again with a fresh retry schedule,
// under the same webhook-id and body (audit webhook.redeliver). A delivery
// still waiting for a retry is tried now instead.
func (s *Service) RedeliverWebhook(ctx context.Context, a *usecase.Actor, webhookID, deliveryID string) (*notify.WebhookDelivery, error) {
	if err := usecase.RequireWorkspace(a); err != nil {
		return nil, err
	}
	var d *notify.WebhookDelivery
	err := s.Store.Update(ctx, func(tx notify.Tx) error {
		w, err := findWebhook(ctx, tx, a.WorkspaceID, webhookID)
		if err != nil {
			return err
		}
		if !usecase.IsUUID(deliveryID) {
			return notify.NotFound("Webhook delivery")
		}
		if err := tx.LockWebhookDelivery(ctx, a.WorkspaceID, deliveryID); err != nil {
			return usecase.NotFound(err, "Webhook delivery")
		}
		if d, err = tx.FindWebhookDelivery(ctx, a.WorkspaceID, deliveryID); err != nil {
			return usecase.NotFound(err, "Webhook delivery")
		}
		if d.WebhookID != w.ID {
			return notify.NotFound("Webhook delivery")
		}
		if !w.Enabled {
			return notify.Conflict("Webhook is disabled")
		}
		now := s.Now()
		d.Status, d.RunAttempts, d.NextAttemptAt, d.FinishedAt, d.UpdatedAt = notify.DeliveryPending, 0, &now, nil, now
		if err := tx.UpdateWebhookDelivery(ctx, d, true); err != nil {
			return err
		}
		return s.Audit(ctx, tx, a, a.WorkspaceID, "webhook.redeliver", "webhook", w.ID, map[string]any{"deliveryId": d.ID})
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}

// relayBatch is how many outbox events one relay transaction takes.
const relayBatch = 500

// RelayWebhookEvents turns undispatched outbox events into deliveries: one
// per enabled endpoint of the event's workspace that subscribes to its
// type, each with its queue job, in the transaction that marks the events
// dispatched. It returns how many deliveries it created.
func (s *Service) RelayWebhookEvents(ctx context.Context) (int, error) {
	total := 0
	for {
		n, events, err := s.relayOnce(ctx)
		total += n
		if err != nil || events < relayBatch {
			return total, err
		}
	}
}

func (s *Service) relayOnce(ctx context.Context) (created, events int, err error) {
	// Most passes find nothing: look with a read before taking the writer.
	err = s.Store.View(ctx, func(tx notify.Tx) error {
		evs, err := tx.PendingEvents(ctx, 1)
		events = len(evs)
		return err
	})
	if err != nil || events == 0 {
		return 0, 0, err
	}
	err = s.Store.Update(ctx, func(tx notify.Tx) error {
		created = 0
		evs, err := tx.PendingEvents(ctx, relayBatch)
		if err != nil {
			return err
		}
		events = len(evs)
		hooks := map[string][]*notify.Webhook{}
		now := s.Now()
		ids := make([]string, len(evs))
		for i, e := range evs {
			ids[i] = e.ID
			ws, ok := hooks[e.WorkspaceID]
			if !ok {
				if ws, err = tx.FindWebhooks(ctx, e.WorkspaceID); err != nil {
					return err
				}
				hooks[e.WorkspaceID] = ws
			}
			var body string
			for _, w := range ws {
				if !w.Enabled || !slices.Contains(w.Events, e.Type) {
					continue
				}
				if body == "" {
					if body, err = eventBody(e); err != nil {
						return err
					}
				}
				ok, err := tx.CreateWebhookDelivery(ctx, &notify.WebhookDelivery{ID: usecase.NewID(), WorkspaceID: e.WorkspaceID,
					WebhookID: w.ID, EventID: e.ID, EventType: e.Type, RequestID: e.RequestID, Body: body,
					Status: notify.DeliveryPending, NextAttemptAt: &now, CreatedAt: now, UpdatedAt: now})
				if err != nil {
					return err
				}
				if ok {
					created++
				}
			}
		}
		return tx.MarkEventsDispatched(ctx, ids, now)
	})
	return created, events, err
}

// Retention of webhook history: outbox events are kept for a week after
// the relay took them (for investigation), finished deliveries with their
// tries for 30 days.
const (
	EventRetention    = 7 * 24 * time.Hour
	DeliveryRetention = 30 * 24 * time.Hour
	pruneBatch        = 1000
)

// PruneWebhookHistory deletes dispatched events and finished deliveries
// past their retention, in bounded batches so no transaction holds the
// writer for long.
func (s *Service) PruneWebhookHistory(ctx context.Context) (events, deliveries int, err error) {
	now := s.Now()
	for {
		var ev, dv int
		err = s.Store.Update(ctx, func(tx notify.Tx) (err error) {
			ev, dv, err = tx.PruneWebhookHistory(ctx, now.Add(-EventRetention), now.Add(-DeliveryRetention), pruneBatch)
			return err
		})
		events, deliveries = events+ev, deliveries+dv
		if err != nil || (ev < pruneBatch && dv < pruneBatch) {
			return events, deliveries, err
		}
	}
}

// webhookData is the `data` of an event body, in a fixed field order.
type webhookData struct {
	RequestID                 string            `json:"requestId"`
	WorkspaceID               string            `json:"workspaceId"`
	Channel                   string            `json:"channel"`
	Status                    string            `json:"status"`
	RecipientAddress          string            `json:"recipientAddress"`
	SelectedProviderAccountID *string           `json:"selectedProviderAccountId"`
	SelectedProviderMessageID *string           `json:"selectedProviderMessageId"`
	FinalErrorCode            *string           `json:"finalErrorCode"`
	FinalErrorMessage         *string           `json:"finalErrorMessage"`
	Metadata                  map[string]string `json:"metadata"`
	// Cross-channel fallback: the channel that delivered the request (null
	// unless sent) and the step it reached (null without a chain).
	DeliveredChannel *string `json:"deliveredChannel"`
	FallbackStep     *int    `json:"fallbackStep"`
	// A send by recipient id or with a category (issue 32) names them;
	// absent otherwise, so SPEC's body is unchanged.
	RecipientID *string `json:"recipientId,omitempty"`
	Category    *string `json:"category,omitempty"`
	// Test: the request was signed with a test-mode key (issue 36);
	// absent for live traffic, so SPEC's body is unchanged.
	Test bool `json:"test,omitempty"`
	// Engagement is the first open or click of notification.opened and
	// .clicked (issue 35): its time, campaign and clicked URL.
	Engagement map[string]any `json:"engagement,omitempty"`
}

// eventBody renders {type, timestamp, data} from the outbox row, whose
// payload was captured with the state change.
func eventBody(e *notify.OutboxEvent) (string, error) {
	if slices.Contains(notify.WorkflowEventTypes, e.Type) {
		// A workflow event is about a run, not a request: its data is
		// the payload the workflows room wrote, as it is.
		b, err := json.Marshal(struct {
			Type      string          `json:"type"`
			Timestamp string          `json:"timestamp"`
			Data      json.RawMessage `json:"data"`
		}{e.Type, e.CreatedAt.UTC().Format("2006-01-02T15:04:05.000Z"), json.RawMessage(e.PayloadJSON)})
		return string(b), err
	}
	var d webhookData
	if err := json.Unmarshal([]byte(e.PayloadJSON), &d); err != nil {
		return "", usecase.Wrap(err, "event %s payload", e.ID)
	}
	if d.Metadata == nil {
		d.Metadata = map[string]string{}
	}
	b, err := json.Marshal(struct {
		Type      string      `json:"type"`
		Timestamp string      `json:"timestamp"`
		Data      webhookData `json:"data"`
	}{e.Type, e.CreatedAt.UTC().Format("2006-01-02T15:04:05.000Z"), d})
	return string(b), err
}

// SignWebhook is the Standard Webhooks signature of one secret:
// "v1," + base64(HMAC-SHA256(key, id + "." + timestamp + "." + body)),
// the key being the base64 after "whsec_".
func SignWebhook(secret, id string, timestamp int64, body []byte) (string, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return "", err
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id + "." + strconv.FormatInt(timestamp, 10) + "."))
	m.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil)), nil
}

// DeliverWebhook makes one try of a delivery for the queue job jobID. It
// answers how long to wait before the next try (zero: the delivery is
// finished, or the job is stale because the delivery was redelivered or
// deleted).
func (s *Service) DeliverWebhook(ctx context.Context, workspaceID, deliveryID string, jobID int64) (time.Duration, error) {
	d, w, err := s.pendingDelivery(ctx, workspaceID, deliveryID, jobID)
	if err != nil || d == nil {
		return 0, err
	}
	try := &notify.WebhookTry{ID: usecase.NewID(), DeliveryID: d.ID}
	if !w.Enabled {
		try.Error = "webhook is disabled"
	} else if err := s.postWebhook(ctx, w, d, try); err != nil {
		return 0, err
	} else {
		status := 0
		if try.HTTPStatus != nil {
			status = *try.HTTPStatus
		}
		s.wh.Metrics.Try(status, float64(try.DurationMS)/1000)
	}
	var wait time.Duration
	var finished string // the outcome, once the delivery ends
	err = s.Store.Update(ctx, func(tx notify.Tx) error {
		cur, err := lockedDelivery(ctx, tx, workspaceID, deliveryID)
		if err != nil || cur == nil {
			return err
		}
		wait, finished, err = s.recordTry(ctx, tx, cur, try, w.Enabled, jobID)
		return err
	})
	if err != nil {
		return 0, err
	}
	if finished != "" {
		s.wh.Metrics.Finish(finished)
	}
	return wait, nil
}

// pendingDelivery reads the delivery and its endpoint; nil when the
// endpoint was deleted with its deliveries, the delivery ended, or
// another job carries it now (a redelivery).
func (s *Service) pendingDelivery(ctx context.Context, workspaceID, deliveryID string, jobID int64) (*notify.WebhookDelivery, *notify.Webhook, error) {
	var d *notify.WebhookDelivery
	var w *notify.Webhook
	err := s.Store.View(ctx, func(tx notify.Tx) (err error) {
		if d, err = tx.FindWebhookDelivery(ctx, workspaceID, deliveryID); err != nil {
			return err
		}
		w, err = tx.FindWebhook(ctx, workspaceID, d.WebhookID)
		return err
	})
	if notify.IsNotFound(err) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	if d.Status != notify.DeliveryPending || d.QueueJobID != jobID {
		return nil, nil, nil
	}
	return d, w, nil
}

// recordTry writes the try made (none when the endpoint is disabled)
// into the locked delivery cur and moves it on: delivered, failed after
// the last retry, or waiting for the next try (wait). A delivery a
// redelivery overtook keeps the try in its log and nothing else.
func (s *Service) recordTry(ctx context.Context, tx notify.Tx, cur *notify.WebhookDelivery, try *notify.WebhookTry, enabled bool, jobID int64) (wait time.Duration, finished string, err error) {
	now := s.Now()
	current := cur.Status == notify.DeliveryPending && cur.QueueJobID == jobID
	if !enabled {
		// No try: the endpoint was disabled while the delivery waited.
		// It ends failed; a redelivery after re-enabling sends it.
		if !current {
			return 0, "", nil
		}
		cur.Status, cur.LastError, cur.NextAttemptAt, cur.FinishedAt, cur.UpdatedAt = notify.DeliveryFailed, try.Error, nil, &now, now
		return 0, "failed", tx.UpdateWebhookDelivery(ctx, cur, false)
	}
	// A try made is logged even when a redelivery overtook it.
	try.Attempt = cur.Attempts + 1
	if err := tx.CreateWebhookTry(ctx, cur.WorkspaceID, try); err != nil {
		return 0, "", err
	}
	cur.Attempts++
	cur.UpdatedAt = now
	if !current {
		return 0, "", tx.UpdateWebhookDelivery(ctx, cur, false)
	}
	cur.RunAttempts++
	cur.LastHTTPStatus, cur.LastError, cur.NextAttemptAt = try.HTTPStatus, try.Error, nil
	ok := try.HTTPStatus != nil && *try.HTTPStatus >= 200 && *try.HTTPStatus < 300
	switch {
	case ok:
		cur.Status, cur.FinishedAt = notify.DeliveryDelivered, &now
		finished = "delivered"
	case cur.RunAttempts > len(s.wh.Schedule):
		cur.Status, cur.FinishedAt = notify.DeliveryFailed, &now
		finished = "failed"
	default:
		wait = jitter(s.wh.Schedule[cur.RunAttempts-1])
		next := now.Add(wait)
		cur.NextAttemptAt = &next
	}
	return wait, finished, tx.UpdateWebhookDelivery(ctx, cur, false)
}

// FailWebhookDelivery ends delivery deliveryID failed with reason as its
// last error, without a try: its queue job jobID crashed the worker
// process too often (worker.CrashGuard). A delivery that ended or was
// handed to another job meanwhile is left alone; a redelivery sends it
// again.
func (s *Service) FailWebhookDelivery(ctx context.Context, workspaceID, deliveryID string, jobID int64, reason string) error {
	failed := false
	err := s.Store.Update(ctx, func(tx notify.Tx) error {
		d, err := lockedDelivery(ctx, tx, workspaceID, deliveryID)
		if err != nil || d == nil || d.Status != notify.DeliveryPending || d.QueueJobID != jobID {
			return err
		}
		now := s.Now()
		d.Status, d.LastError, d.NextAttemptAt, d.FinishedAt, d.UpdatedAt = notify.DeliveryFailed, reason, nil, &now, now
		failed = true
		return tx.UpdateWebhookDelivery(ctx, d, false)
	})
	if err == nil && failed {
		s.wh.Metrics.Finish("failed")
	}
	return err
}

// lockedDelivery reads a delivery holding its row's lock to the end of
// tx; nil when it is gone (its endpoint was deleted).
func lockedDelivery(ctx context.Context, tx notify.Tx, workspaceID, deliveryID string) (*notify.WebhookDelivery, error) {
	err := tx.LockWebhookDelivery(ctx, workspaceID, deliveryID)
	if notify.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return tx.FindWebhookDelivery(ctx, workspaceID, deliveryID)
}

// jitter spreads retries by up to ±10% so endpoints that failed together
// are not retried together.
func jitter(d time.Duration) time.Duration {
	if d <= 0 {
		return time.Millisecond
	}
	spread := int64(d) / 5
	if spread <= 0 {
		return d
	}
	return d - time.Duration(spread/2) + time.Duration(mrand.Int64N(spread+1))
}

// postWebhook sends the delivery's body once and fills try with the
// outcome; the delivery engine makes the HTTP exchange. Only an error that
// is not about the receiver (a sealed secret that does not open, no
// engine) is returned.
func (s *Service) postWebhook(ctx context.Context, w *notify.Webhook, d *notify.WebhookDelivery, try *notify.WebhookTry) error {
	now := s.Now()
	secrets, err := s.webhookSecrets(w, now)
	if err != nil {
		return err
	}
	body := []byte(d.Body)
	ts := now.Unix()
	sigs := make([]string, 0, len(secrets))
	for _, sec := range secrets {
		sig, err := SignWebhook(sec, d.ID, ts, body)
		if err != nil {
			return err
		}
		sigs = append(sigs, sig)
	}
	if s.wh.Poster == nil {
		return errNoDelivery
	}
	r := s.wh.Poster.PostWebhook(ctx, notify.WebhookPost{URL: w.URL, ID: d.ID, Timestamp: ts,
		Signature: strings.Join(sigs, " "), Body: body})
	try.HTTPStatus, try.Response, try.Error = r.Status, r.Response, r.Error
	if r.Tried {
		try.DurationMS, try.CreatedAt = r.Duration.Milliseconds(), now
	}
	return nil
}

// errNoDelivery fails a webhook try of a Service built without the
// delivery engine (which makes the HTTP tries).
var errNoDelivery = errors.New("webhook delivery needs the delivery engine")

// webhookSecrets are the secrets that sign now: the current one, and the
// previous one while its overlap lasts.
func (s *Service) webhookSecrets(w *notify.Webhook, now time.Time) ([]string, error) {
	cur, err := s.box.OpenFor(notify.SealedAAD(notify.SealedWebhookSecret, w.ID), w.SecretEnc)
	if err != nil {
		return nil, usecase.Wrap(err, "webhook %s secret", w.ID)
	}
	out := []string{string(cur)}
	if w.PreviousSecretEnc != "" && w.PreviousExpiresAt != nil && now.Before(*w.PreviousExpiresAt) {
		prev, err := s.box.OpenFor(notify.SealedAAD(notify.SealedWebhookSecret, w.ID), w.PreviousSecretEnc)
		if err != nil {
			return nil, usecase.Wrap(err, "webhook %s previous secret", w.ID)
		}
		out = append(out, string(prev))
	}
	return out, nil
}
