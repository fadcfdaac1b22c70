package notify

import (
	"context"
	"time"
)

// DNSRecord is one DNS record a vendor asks a sending domain's owner to
// publish. Name is fully qualified without the trailing dot; Value is the
// record data as entered in a DNS console (TXT without quotes).
type DNSRecord struct {
	// Purpose: dkim, spf, mail_from_mx (bounce MX of a custom MAIL FROM or
	// return-path subdomain), return_path (CNAME) or verification.
	Purpose  string `json:"purpose"`
	Type     string `json:"type"` // CNAME, TXT or MX
	Name     string `json:"name"`
	Value    string `json:"value"`
	Priority int    `json:"priority,omitempty"` // MX only
}

// SendingIdentity is a sender address or domain of an e-mail provider
// account, as notifyd asked the vendor for it and last read its state.
type SendingIdentity struct {
	ID                string
	WorkspaceID       string
	ProviderAccountID string
	Type              string // email_address | domain
	Name              string // the address or the domain, lower case
	VendorID          string // the vendor's id, when it has one apart from Name
	Status            string // pending | verified | failed
	Origin            string // verify | connect | adopt: how notifyd came to track it
	MailFromDomain    string
	SPFInclude        string
	Records           []DNSRecord
	CreatedAt         time.Time
	UpdatedAt         time.Time
	CheckedAt         time.Time // last read from the vendor
	VerifiedAt        *time.Time
}

// IdentityTx holds the store verbs of sending identities.
type IdentityTx interface {
	// CreateSendingIdentity stores a new identity; ErrConflict when the
	// account already tracks one of that type and name.
	CreateSendingIdentity(ctx context.Context, s *SendingIdentity) error
	// UpdateSendingIdentity stores the vendor state of an identity.
	UpdateSendingIdentity(ctx context.Context, s *SendingIdentity) error
	FindSendingIdentity(ctx context.Context, workspaceID, providerAccountID, id string) (*SendingIdentity, error)
	// FindSendingIdentities lists an account's identities, oldest first.
	FindSendingIdentities(ctx context.Context, workspaceID, providerAccountID string) ([]*SendingIdentity, error)
}
