package notify

import (
	"context"
	"time"
)

// Consent kinds a recipient may give (issue 32, item 5).
const (
	// ConsentNightAdvertising is the separate consent Korean law asks
	// before advertising reaches a phone between 21:00 and 08:00 Asia/Seoul
	// (정보통신망법 제50조 ③).
	ConsentNightAdvertising = "night_advertising"
)

// Who recorded a consent.
const (
	ConsentByMember    = "member"
	ConsentByAPI       = "api"
	ConsentByRecipient = "recipient" // on the preference page
)

// RecipientConsent is one consent a recipient gave: when, where from (the
// caller's words: a form, a call-centre script, the preference page) and
// who recorded it. It goes with its profile on erasure.
type RecipientConsent struct {
	RecipientID string // the profile's row id (Recipient.ID)
	WorkspaceID string
	Kind        string
	GivenAt     time.Time
	Source      string
	RecordedBy  string // ConsentByMember, ConsentByAPI or ConsentByRecipient
	// ActorID is the member or API key that recorded it ("" on the page).
	ActorID string
}

// ConsentTx holds the store verbs of recipient consents.
type ConsentTx interface {
	// PutConsent records c, replacing the profile's earlier consent of its
	// kind.
	PutConsent(ctx context.Context, c *RecipientConsent) error
	// DeleteConsent withdraws a consent; ErrNotFound when none was given.
	DeleteConsent(ctx context.Context, workspaceID, recipientID, kind string) error
	// FindConsents reads the consents of the profiles recipientIDs (row
	// ids), by profile row id.
	FindConsents(ctx context.Context, workspaceID string, recipientIDs []string) (map[string][]*RecipientConsent, error)
}
