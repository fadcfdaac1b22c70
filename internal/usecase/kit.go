package usecase

import (
	"context"
	"log/slog"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
)

// Kit holds the ports every room uses: the store, the clock and the
// logger. A room embeds it and adds only the ports of its own work.
type Kit struct {
	Store notify.Store
	Clock func() time.Time // nil: time.Now
	Log   *slog.Logger     // nil: slog.Default()
}

// NewKit fills a Kit's defaults.
func NewKit(store notify.Store, clock func() time.Time, log *slog.Logger) Kit {
	if clock == nil {
		clock = time.Now
	}
	if log == nil {
		log = slog.Default()
	}
	return Kit{Store: store, Clock: clock, Log: log}
}

// Now is the clock in UTC.
func (k Kit) Now() time.Time {
	if k.Clock == nil {
		return time.Now().UTC()
	}
	return k.Clock().UTC()
}

// AuditAs writes one audit entry of c: a member is its actorUserId; an
// API key leaves actorUserId null (SPEC's "the system acted") and is
// named by apiKeyId in the payload; the recipient on the preference page
// leaves it null too and is named by "via": "preference_page".
func (k Kit) AuditAs(ctx context.Context, tx notify.Tx, c Caller, action, targetType, targetID string, payload map[string]any) error {
	if payload == nil {
		payload = map[string]any{}
	}
	if c.Key != nil {
		payload["apiKeyId"] = c.Key.ID
	}
	if c.Page != nil {
		payload["via"] = "preference_page"
	}
	return k.Audit(ctx, tx, c.Actor, c.Workspace(), action, targetType, targetID, payload)
}

// Audit writes one audit entry in tx; a nil actor (the API, the system)
// leaves actorUserId empty.
func (k Kit) Audit(ctx context.Context, tx notify.Tx, a *Actor, workspaceID, action, targetType, targetID string, payload map[string]any) error {
	var actor *string
	if a != nil && a.UserID != "" {
		id := a.UserID
		actor = &id
	}
	return tx.CreateAudit(ctx, &notify.AuditEntry{ID: NewID(), WorkspaceID: workspaceID, ActorUserID: actor,
		Action: action, TargetType: targetType, TargetID: targetID, Payload: payload, CreatedAt: k.Now()})
}

// Event writes an outbox row of type typ for r, when a webhook of r's
// workspace subscribes to it.
func Event(ctx context.Context, tx notify.Tx, typ string, r *notify.Request, now time.Time) error {
	events, err := notify.Subscribed(ctx, tx, []*notify.Event{notify.RequestEvent(NewID(), typ, r, now)})
	if err != nil {
		return err
	}
	return tx.CreateEvents(ctx, events)
}
