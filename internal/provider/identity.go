package provider

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/notifyd/notifyd/internal/notify"
)

// Sending identities: the sender addresses and domains an e-mail vendor
// account may send from. The e-mail kinds whose vendor has an API for them
// implement IdentityAPI (Kind.Identities); the service tracks what was
// asked and what the vendor answered.

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

// DNSRecord is one record the vendor asks the domain's owner to publish.
type DNSRecord = notify.DNSRecord

// Identity is a vendor's view of one sending identity.
type Identity struct {
	Type string // IdentityEmailAddress or IdentityDomain
	Name string // the address or the domain, lower case
	// VendorID is the vendor's id when it has one apart from the name
	// (Resend and Postmark ids); SES names identities by Name.
	VendorID string
	Status   string // IdentityPending, IdentityVerified or IdentityFailed
	// Records are the DNS records of a domain, empty for addresses.
	Records []DNSRecord
	// MailFromDomain is the custom MAIL FROM (SES) or return-path
	// (Resend, Postmark) subdomain, when there is one.
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

// IdentityAPI is a vendor's sender-identity API for one account.
type IdentityAPI interface {
	// VerifyAddress starts the verification of one sender address: the
	// vendor mails a confirmation link to it. ErrIdentityUnsupported when
	// the vendor verifies domains only.
	VerifyAddress(ctx context.Context, address string) (*Identity, error)
	// ConnectDomain creates the domain identity and answers the records to
	// publish. ErrIdentityExists when the account already has it.
	ConnectDomain(ctx context.Context, domain string, o DomainOptions) (*Identity, error)
	// Get reads an identity's current state (asking the vendor to check
	// DNS again where it only checks on request). ErrIdentityNotFound when
	// the account does not have it.
	Get(ctx context.Context, typ, name, vendorID string) (*Identity, error)
	// FindDomain looks up a domain identity the account already has, by
	// name. ErrIdentityNotFound when it has none.
	FindDomain(ctx context.Context, domain string) (*Identity, error)
}

// Errors of an IdentityAPI, besides a classified *Error for the vendor's
// other failures (credentials, rate limits, outages).
var (
	ErrIdentityNotFound    = errors.New("identity not found in the vendor account")
	ErrIdentityExists      = errors.New("identity already exists in the vendor account")
	ErrIdentityUnsupported = errors.New("the vendor has no API for this kind of identity")
)

// IdentityError is a vendor's refusal of an identity request (a bad name,
// a public domain): the caller's input, not an outage.
type IdentityError struct{ Message string }

func (e *IdentityError) Error() string { return e.Message }

// IdentityCall sends one JSON request of an identity API through Do
// (in, when not nil, is the body). It returns the status and body of an
// answer that SPEC's status rules leave to the adapter (2xx, and 4xx other
// than 401, 403 and 429); transport failures and those statuses are *Error.
func IdentityCall(ctx context.Context, client *http.Client, method, url string, header http.Header, in any) (int, []byte, error) {
	h := header.Clone()
	h.Set("Accept", "application/json")
	c := Call{Method: method, URL: url, Header: h}
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return 0, nil, err
		}
		h.Set("Content-Type", "application/json")
		c.Body, c.Logged = b, json.RawMessage(b)
	}
	ex, body, perr := Do(ctx, client, c)
	if perr != nil {
		return 0, nil, perr
	}
	return ex.Response.HTTPStatus, body, nil
}

// HostUnder qualifies a record name relative to domain ("send" becomes
// "send.example.com"); a name already under domain stays as it is.
func HostUnder(name, domain string) string {
	name = strings.TrimSuffix(strings.ToLower(name), ".")
	switch {
	case name == "" || name == "@":
		return domain
	case name == domain || strings.HasSuffix(name, "."+domain):
		return name
	}
	return name + "." + domain
}
