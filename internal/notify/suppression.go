package notify

import (
	"context"
	"time"
)

// Suppression reasons (API-DECISIONS section 4).
const (
	SuppressUnsubscribe = "unsubscribe"
	SuppressHardBounce  = "hard_bounce"
	SuppressComplaint   = "complaint"
	SuppressManual      = "manual"
)

// ValidSuppressionReason reports whether r is one of the four reasons.
func ValidSuppressionReason(r string) bool {
	switch r {
	case SuppressUnsubscribe, SuppressHardBounce, SuppressComplaint, SuppressManual:
		return true
	}
	return false
}

// Suppression is one address on a workspace's email suppression list.
type Suppression struct {
	WorkspaceID string
	Address     string
	Reason      string
	CreatedAt   time.Time
}

// SuppressionFilter pages the list newest first; Address filters to one
// exact (normalized) address. The cursor's ID is the address.
type SuppressionFilter struct {
	Address string
	Limit   int
	Before  *Cursor
}

// CallbackSecret is a provider account's callback secret, stored as
// SHA-256 hex hashes. PreviousHash is set between rotate and finalize,
// when both secrets are accepted.
type CallbackSecret struct {
	ProviderAccountID string
	WorkspaceID       string
	CurrentHash       string
	PreviousHash      string
	RotatedAt         time.Time
}

// Delivery feedback types and bounce classes.
const (
	FeedbackBounce    = "bounce"
	FeedbackComplaint = "complaint"

	BouncePermanent    = "permanent"
	BounceTransient    = "transient"
	BounceUndetermined = "undetermined"
)

// DeliveryFeedback is one bounce or complaint a vendor reported for one
// recipient of a message it accepted. RequestID and AttemptID are empty
// when no attempt carries the provider message id.
type DeliveryFeedback struct {
	ID                string
	WorkspaceID       string
	ProviderAccountID string
	ProviderMessageID string
	RequestID         string
	AttemptID         string
	RecipientAddress  string
	Type              string // bounce | complaint
	BounceType        string // permanent | transient | undetermined; empty for complaints
	Detail            string
	Suppressed        bool
	VendorEventID     string // dedupes vendor retries, per provider account
	OccurredAt        time.Time
	ReceivedAt        time.Time
}

// SuppressionTx holds the store verbs of the email suppression list and bounce/complaint intake.
type SuppressionTx interface {
	FindSuppressions(ctx context.Context, workspaceID string, f SuppressionFilter) ([]*Suppression, error)
	FindSuppression(ctx context.Context, workspaceID, address string) (*Suppression, error)
	// DeleteSuppression removes an address; ErrNotFound when it is not listed.
	DeleteSuppression(ctx context.Context, workspaceID, address string) error

	// FindProviderAccountAnyWorkspace loads an account by id alone: a
	// vendor callback names the account, and its secret proves the caller.
	FindProviderAccountAnyWorkspace(ctx context.Context, id string) (*ProviderAccount, error)
	FindCallbackSecret(ctx context.Context, providerAccountID string) (*CallbackSecret, error)
	// FindCallbackSender loads an account by id alone with its callback
	// secret, in one statement (a vendor callback's proof); ErrNotFound
	// when either is missing.
	FindCallbackSender(ctx context.Context, id string) (*ProviderAccount, *CallbackSecret, error)
	PutCallbackSecret(ctx context.Context, s *CallbackSecret) error

	// FindAttemptByMessageID finds the newest attempt of the account that
	// the vendor answered with messageID.
	FindAttemptByMessageID(ctx context.Context, workspaceID, providerAccountID, messageID string) (*Attempt, error)
	// CreateDeliveryFeedback stores f; false when the vendor event was
	// already recorded (a retried callback), in which case nothing changes.
	CreateDeliveryFeedback(ctx context.Context, f *DeliveryFeedback) (bool, error)
}
