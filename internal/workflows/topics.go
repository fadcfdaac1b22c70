package workflows

import (
	"context"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/usecase"
)

// Subscribe subscribes a recipient profile to a topic (audit
// topic.subscribe when it was not subscribed) and reports whether it was
// not before. A topic exists while it has subscribers.
func (s *Service) Subscribe(ctx context.Context, c usecase.Caller, topic, externalID string) (bool, error) {
	if err := checkSubscription(topic, externalID); err != nil {
		return false, err
	}
	ws := c.Workspace()
	var created bool
	err := s.Store.Update(ctx, func(tx notify.Tx) error {
		if _, err := tx.FindRecipient(ctx, ws, externalID); err != nil {
			return usecase.NotFound(err, "Recipient")
		}
		var err error
		if created, err = tx.PutTopicSubscription(ctx, ws, topic, externalID, s.Now()); err != nil || !created {
			return err
		}
		return s.AuditAs(ctx, tx, c, "topic.subscribe", "recipient", externalID, map[string]any{"topic": topic})
	})
	return created, err
}

// Unsubscribe ends a subscription (audit topic.unsubscribe); 404 when
// there was none.
func (s *Service) Unsubscribe(ctx context.Context, c usecase.Caller, topic, externalID string) error {
	if err := checkSubscription(topic, externalID); err != nil {
		return notify.NotFound("Topic subscription")
	}
	ws := c.Workspace()
	return s.Store.Update(ctx, func(tx notify.Tx) error {
		if err := tx.DeleteTopicSubscription(ctx, ws, topic, externalID); err != nil {
			return usecase.NotFound(err, "Topic subscription")
		}
		return s.AuditAs(ctx, tx, c, "topic.unsubscribe", "recipient", externalID, map[string]any{"topic": topic})
	})
}

// SubscriberPage is a page of a topic's subscribers by external id.
type SubscriberPage struct {
	Subscribers []string
	Next        string // the cursor of the next page, "" when none
}

// Subscribers pages a topic's subscribers by external id.
func (s *Service) Subscribers(ctx context.Context, ws, topic, cursor string, limit int) (*SubscriberPage, error) {
	if CheckKey("topic", topic) != nil {
		return &SubscriberPage{Subscribers: []string{}}, nil
	}
	switch {
	case limit == 0:
		limit = DefaultRunPage
	case limit < 1 || limit > MaxRecipients:
		return nil, notify.Invalid("limit must be from 1 to %d", MaxRecipients)
	}
	var ids []string
	err := s.Store.View(ctx, func(tx notify.Tx) (err error) {
		ids, err = tx.FindTopicSubscribers(ctx, ws, topic, cursor, limit+1)
		return err
	})
	if err != nil {
		return nil, err
	}
	p := &SubscriberPage{Subscribers: ids}
	if len(ids) > limit {
		p.Subscribers = ids[:limit]
		p.Next = ids[limit-1]
	}
	if p.Subscribers == nil {
		p.Subscribers = []string{}
	}
	return p, nil
}

func checkSubscription(topic, externalID string) error {
	if err := CheckKey("topic", topic); err != nil {
		return err
	}
	return notify.CheckExternalID("externalId", externalID)
}
