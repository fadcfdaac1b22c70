package notify

import (
	"context"
	"slices"
	"time"
)

// Webhook delivery statuses.
const (
	DeliveryPending   = "pending"   // waiting for its next try
	DeliveryDelivered = "delivered" // a try answered 2xx
	DeliveryFailed    = "failed"    // the retry schedule is spent (or the endpoint went away)
)

// EventTypes are the events a webhook may subscribe to (SPEC "Events").
var EventTypes = []string{EventDelivered, EventFailed, EventCanceled}

// WebhookEventTypes are every event a webhook may subscribe to: SPEC's,
// then those the later rooms added (the inbox's states, the delivery
// receipts, the workflows' runs).
var WebhookEventTypes = slices.Concat(EventTypes, InboxEventTypes, ReceiptEventTypes, WorkflowEventTypes, EngagementEventTypes)

// Webhook is a registered endpoint. Secrets are stored sealed; the
// previous secret keeps signing until PreviousExpiresAt after a rotation.
type Webhook struct {
	ID                string
	WorkspaceID       string
	URL               string
	Events            []string
	Enabled           bool
	SecretEnc         string
	PreviousSecretEnc string
	PreviousExpiresAt *time.Time
	CreatedAt         time.Time
	UpdatedAt         time.Time
}

// OutboxEvent is an undispatched row of the event outbox.
type OutboxEvent struct {
	Event
	PayloadJSON string
}

// WebhookDelivery is one event bound for one endpoint. Body is fixed at
// creation so every try (and a redelivery) sends the same signed bytes
// under the same webhook-id (the delivery id).
type WebhookDelivery struct {
	ID             string
	WorkspaceID    string
	WebhookID      string
	EventID        string
	EventType      string
	RequestID      string
	Body           string
	Status         string
	Attempts       int // tries in total
	RunAttempts    int // tries since the delivery (or its redelivery) was queued
	QueueJobID     int64
	NextAttemptAt  *time.Time
	LastHTTPStatus *int
	LastError      string
	CreatedAt      time.Time
	UpdatedAt      time.Time
	FinishedAt     *time.Time
	Tries          []*WebhookTry // filled by FindWebhookDeliveries, oldest first
}

// WebhookTry is one HTTP try of a delivery, as kept in the delivery log.
type WebhookTry struct {
	ID         string
	DeliveryID string
	Attempt    int
	HTTPStatus *int
	Error      string
	DurationMS int64
	Response   string // at most 1 KB of the answer body
	CreatedAt  time.Time
}

// DeliveryFilter pages a webhook's deliveries newest first.
type DeliveryFilter struct {
	Limit  int
	Before *Cursor
}

// WebhookTx holds the store verbs of webhook endpoints, their deliveries and the event outbox.
type WebhookTx interface {
	CreateWebhook(ctx context.Context, w *Webhook) error
	FindWebhook(ctx context.Context, workspaceID, id string) (*Webhook, error)
	FindWebhooks(ctx context.Context, workspaceID string) ([]*Webhook, error)
	UpdateWebhook(ctx context.Context, w *Webhook) error
	DeleteWebhook(ctx context.Context, workspaceID, id string) error

	// PendingEvents returns up to limit undispatched outbox events, oldest first.
	PendingEvents(ctx context.Context, limit int) ([]*OutboxEvent, error)
	// MarkEventsDispatched stamps outbox events as handed to the relay.
	MarkEventsDispatched(ctx context.Context, ids []string, at time.Time) error
	// CreateWebhookDelivery inserts a delivery and its queue job (in this
	// transaction) unless the endpoint already has one for the event; it
	// reports whether it inserted.
	CreateWebhookDelivery(ctx context.Context, d *WebhookDelivery) (bool, error)
	FindWebhookDelivery(ctx context.Context, workspaceID, id string) (*WebhookDelivery, error)
	// LockWebhookDelivery holds the delivery row's write lock until the
	// transaction ends, so a try's result and a redelivery never overwrite
	// each other (ErrNotFound when it is gone).
	LockWebhookDelivery(ctx context.Context, workspaceID, id string) error
	FindWebhookDeliveries(ctx context.Context, workspaceID, webhookID string, f DeliveryFilter) ([]*WebhookDelivery, error)
	// UpdateWebhookDelivery stores the delivery's state; with requeue it
	// first cancels its queue job and inserts a new one (QueueJobID changes).
	UpdateWebhookDelivery(ctx context.Context, d *WebhookDelivery, requeue bool) error
	CreateWebhookTry(ctx context.Context, workspaceID string, t *WebhookTry) error
	// PruneWebhookHistory deletes up to limit outbox events dispatched
	// before eventsBefore and up to limit deliveries (with their tries)
	// finished before deliveriesBefore; it reports how many of each.
	PruneWebhookHistory(ctx context.Context, eventsBefore, deliveriesBefore time.Time, limit int) (events, deliveries int, err error)
}

// WebhookPost is one signed try of a webhook delivery, ready to be sent:
// Body goes to URL with the Standard Webhooks headers webhook-id (ID),
// webhook-timestamp (Timestamp, Unix seconds) and webhook-signature
// (Signature: the signatures, space-separated).
type WebhookPost struct {
	URL       string
	ID        string
	Timestamp int64
	Signature string
	Body      []byte
}

// WebhookPostResult is what one WebhookPost came to.
type WebhookPostResult struct {
	// Tried is false when the request could not even be built (Error
	// says why); nothing was sent and Duration is zero.
	Tried bool
	// Status is the receiver's HTTP status; nil when it did not answer.
	Status *int
	// Response is an excerpt of the answer's body, storable as text.
	Response string
	// Error is empty on a 2xx answer; else it says what went wrong.
	Error string
	// Duration is how long the exchange took.
	Duration time.Duration
}

// Subscribed keeps the events of es that a webhook of their workspace
// subscribes to. Events exist only to be delivered to webhooks: an event
// nobody subscribes to is not written (two rows fewer per delivery for
// workspaces without webhooks). A webhook receives the events of state
// changes made after it subscribed.
func Subscribed(ctx context.Context, tx Tx, es []*Event) ([]*Event, error) {
	hooks := map[string][]*Webhook{}
	out := es[:0:0]
	for _, e := range es {
		ws, ok := hooks[e.WorkspaceID]
		if !ok {
			var err error
			if ws, err = tx.FindWebhooks(ctx, e.WorkspaceID); err != nil {
				return nil, err
			}
			hooks[e.WorkspaceID] = ws
		}
		for _, w := range ws {
			if slices.Contains(w.Events, e.Type) {
				out = append(out, e)
				break
			}
		}
	}
	return out, nil
}

// SubscribedBy is Subscribed for events of one workspace whose webhooks'
// event lists are hooks (read with the write that made the events).
func SubscribedBy(hooks [][]string, es []*Event) []*Event {
	out := es[:0:0]
	for _, e := range es {
		for _, h := range hooks {
			if slices.Contains(h, e.Type) {
				out = append(out, e)
				break
			}
		}
	}
	return out
}
