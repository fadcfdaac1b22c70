package notify

import (
	"context"
	"time"
)

// Consent statuses of a newsletter subscriber (SPEC "Subscriber consent").
const (
	ConsentSubscribed   = "subscribed"
	ConsentUnsubscribed = "unsubscribed"
	ConsentPending      = "pending"
)

// ValidConsent reports whether s is one of the consent statuses.
func ValidConsent(s string) bool {
	return s == ConsentSubscribed || s == ConsentUnsubscribed || s == ConsentPending
}

// SuppressionUnsubscribe is the suppression reason of a newsletter unsubscribe.
const SuppressionUnsubscribe = "unsubscribe"

// Subscriber is a newsletter subscriber. Address is trimmed and
// lower-cased. UnsubscribeToken (43 base64url characters) is never shown
// by the API; campaign mails embed it in their unsubscribe links.
type Subscriber struct {
	ID               string
	WorkspaceID      string
	Channel          Channel
	Address          string
	Name             string
	ConsentStatus    string
	ConsentSource    string
	Attributes       map[string]string
	UnsubscribeToken string
	ConsentedAt      *time.Time
	UnsubscribedAt   *time.Time
	CreatedAt        time.Time
	UpdatedAt        time.Time
}

// SubscriberFilter selects a page of subscribers, newest first. Empty
// fields do not filter; Search is a case-insensitive substring of the
// address or the name.
type SubscriberFilter struct {
	Channel       Channel
	ConsentStatus string
	Search        string
	Limit         int
	Offset        int
}

// SubscriberTx holds the store verbs of newsletter subscribers and the unsubscribe flow.
type SubscriberTx interface {
	// CreateSubscriber inserts s; ErrConflict (without ending the
	// transaction) when the workspace already has its channel and address.
	CreateSubscriber(ctx context.Context, s *Subscriber) error
	FindSubscriber(ctx context.Context, workspaceID, id string) (*Subscriber, error)
	// LockSubscriber is FindSubscriber holding the row's write lock until
	// the transaction ends, so a read-modify-write of it loses no update.
	LockSubscriber(ctx context.Context, workspaceID, id string) (*Subscriber, error)
	// FindSubscriberByToken finds the subscriber of an unsubscribe token in
	// any workspace: the token alone identifies it.
	FindSubscriberByToken(ctx context.Context, token string) (*Subscriber, error)
	// FindSubscribersByAddress returns the workspace's subscribers of
	// channel among addresses, keyed by address.
	FindSubscribersByAddress(ctx context.Context, workspaceID string, channel Channel, addresses []string) (map[string]*Subscriber, error)
	// FindSubscribers returns one page and the total matching f.
	FindSubscribers(ctx context.Context, workspaceID string, f SubscriberFilter) ([]*Subscriber, int, error)
	// UpdateSubscriber writes name, consent fields, attributes and updatedAt.
	UpdateSubscriber(ctx context.Context, s *Subscriber) error
	DeleteSubscriber(ctx context.Context, workspaceID, id string) error
	// UpsertSubscribers inserts subs in batched statements; a row whose
	// workspace, channel and address exist already gets its name, consent
	// fields, attributes and updatedAt overwritten (id, token and createdAt
	// stay). subs must not repeat a channel and address.
	UpsertSubscribers(ctx context.Context, subs []*Subscriber) error
	// LiftUnsubscribeSuppressions removes the workspace's suppressions of
	// addresses whose reason is unsubscribe (a renewed consent); other
	// reasons stay.
	LiftUnsubscribeSuppressions(ctx context.Context, workspaceID string, addresses []string) error
}
