package notify

import (
	"context"
	"time"
)

// NewsletterSettings are a workspace's newsletter settings (issue 21,
// double opt-in). A workspace without a stored row has the defaults:
// DoubleOptIn off, UpdatedAt nil.
type NewsletterSettings struct {
	WorkspaceID string
	// DoubleOptIn makes subscribers created or imported without a
	// confirmation pending until they confirm through a mailed link.
	DoubleOptIn bool
	UpdatedAt   *time.Time
}

// ConfirmationSent records the last confirmation mail queued for a
// pending subscriber.
type ConfirmationSent struct {
	WorkspaceID  string
	SubscriberID string
	RequestID    string
	SentAt       time.Time
	Sends        int // mails queued in all, this one included
}

// OptInTx holds the store verbs of double opt-in.
type OptInTx interface {
	// FindNewsletterSettings returns the workspace's settings, the
	// defaults when none are stored.
	FindNewsletterSettings(ctx context.Context, workspaceID string) (*NewsletterSettings, error)
	PutNewsletterSettings(ctx context.Context, s *NewsletterSettings) error
	// PutConfirmationsSent records confirmation mails queued at sentAt
	// (one per subscriber): a subscriber's row gets the new request and
	// time and its count grows by one.
	PutConfirmationsSent(ctx context.Context, workspaceID string, sent []ConfirmationSent) error
	// FindConfirmationSent returns the subscriber's last confirmation
	// mail; ErrNotFound when none was queued.
	FindConfirmationSent(ctx context.Context, workspaceID, subscriberID string) (*ConfirmationSent, error)
}
