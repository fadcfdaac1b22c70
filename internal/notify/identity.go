package notify

import (
	"context"
	"errors"
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

// The vendor side of sending identities: the e-mail kinds whose vendor has
// an API for them implement IdentityAPI (internal/provider adapters); the
// service tracks what was asked and what the vendor answered.

// Identity types.
const (
	IdentityEmailAddress = "email_address"
	IdentityDomain       = "domain"
)

// Identity states, normalized over the vendors.
const (
	IdentityPending  = "pending"  // created; the vendor has not seen the proof yet
	IdentityVerified = "verified" // the vendor lets the account send from it
	IdentityFailed   = "failed"   // the vendor gave up; fix DNS and check again
)

// VendorIdentity is a vendor's view of one sending identity.
type VendorIdentity struct {
	Type string // IdentityEmailAddress or IdentityDomain
	Name string // the address or the domain, lower case
	// VendorID is the vendor's id when it has one apart from the name
	// (Resend and Postmark ids); SES names identities by Name.
	VendorID string
	Status   string // IdentityPending, IdentityVerified or IdentityFailed
	// Records are the DNS records of a domain, empty for addresses.
	Records []DNSRecord
	// MailFromDomain is the custom MAIL FROM (SES) or return-path
	// (Resend, Postmark) domain, when there is one.
	MailFromDomain string
	// SPFInclude is the include: mechanism the domain's SPF must carry
	// for the vendor's servers (amazonses.com, spf.mtasv.net).
	SPFInclude string
}

// DomainOptions are the choices of a domain connect.
type DomainOptions struct {
	// MailFromSubdomain is the custom MAIL FROM (SES) or return-path
	// (Resend, Postmark) label under the domain, e.g. "mail"; empty for
	// the vendor's default.
	MailFromSubdomain string
}

// IdentityAPI is a vendor's sender-identity API for one account. Besides
// the errors below, a failed vendor call is a *VendorCallError.
type IdentityAPI interface {
	// VerifyAddress starts the verification of one sender address: the
	// vendor mails a confirmation link to it. ErrIdentityUnsupported when
	// the vendor verifies domains only.
	VerifyAddress(ctx context.Context, address string) (*VendorIdentity, error)
	// ConnectDomain creates the domain identity and answers the records to
	// publish. ErrIdentityExists when the account already has it.
	ConnectDomain(ctx context.Context, domain string, o DomainOptions) (*VendorIdentity, error)
	// Get reads an identity's current state (asking the vendor to check
	// DNS again where it only checks on request). ErrIdentityNotFound when
	// the account does not have it.
	Get(ctx context.Context, typ, name, vendorID string) (*VendorIdentity, error)
	// FindDomain looks up a domain identity the account already has, by
	// name. ErrIdentityNotFound when it has none.
	FindDomain(ctx context.Context, domain string) (*VendorIdentity, error)
}

// Errors of an IdentityAPI.
var (
	ErrIdentityNotFound    = errors.New("identity not found in the vendor account")
	ErrIdentityExists      = errors.New("identity already exists in the vendor account")
	ErrIdentityUnsupported = errors.New("the vendor has no API for this kind of identity")
)

// IdentityRefused is a vendor's refusal of an identity request (a bad
// name, a public domain): the caller's input, not an outage.
type IdentityRefused struct{ Message string }

func (e *IdentityRefused) Error() string { return e.Message }

// VendorCallError is a failed vendor call outside a send (credentials,
// rate limit, outage), classified like a send's failure.
type VendorCallError struct {
	Code    FailureCode
	Message string
}

func (e *VendorCallError) Error() string { return string(e.Code) + ": " + e.Message }
