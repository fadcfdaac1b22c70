package postmark

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider"
)

// Postmark's account-level API for sender signatures (one address,
// confirmed by a link Postmark mails to it) and domains (DKIM and a
// return-path CNAME). It takes the account token, not the server token
// that sends: configJson key AccountTokenKey.

// AccountTokenKey is the optional configJson key holding the Postmark
// account token (X-Postmark-Account-Token); only the identity API uses it.
const AccountTokenKey = "mailz_account_token"

// spfInclude authorizes Postmark's servers in an SPF record.
const spfInclude = "spf.mtasv.net"

// Postmark ErrorCodes of the account API.
const (
	codeSenderNotFound = 501
	codeSenderExists   = 504
	codeDomainNotFound = 510
)

// Identities is the identity API of one Postmark account.
type Identities struct {
	p     *Provider
	token string
}

// Interface guard.
var _ notify.IdentityAPI = Identities{}

// newIdentities builds the identity API of one Postmark account; it needs
// AccountTokenKey besides the sending keys (Spec.IdentityRequired).
func newIdentities(c Config, deps provider.Deps) (notify.IdentityAPI, error) {
	p, err := newProvider(c, deps)
	if err != nil {
		return nil, err
	}
	return Identities{p: p.(*Provider), token: c.AccountToken}, nil
}

type sender struct {
	ID           int64  `json:"ID"`
	EmailAddress string `json:"EmailAddress"`
	Confirmed    bool   `json:"Confirmed"`
}

type domainDetails struct {
	ID                         int64  `json:"ID"`
	Name                       string `json:"Name"`
	DKIMVerified               bool   `json:"DKIMVerified"`
	DKIMHost                   string `json:"DKIMHost"`
	DKIMTextValue              string `json:"DKIMTextValue"`
	DKIMPendingHost            string `json:"DKIMPendingHost"`
	DKIMPendingTextValue       string `json:"DKIMPendingTextValue"`
	ReturnPathDomain           string `json:"ReturnPathDomain"`
	ReturnPathDomainVerified   bool   `json:"ReturnPathDomainVerified"`
	ReturnPathDomainCNAMEValue string `json:"ReturnPathDomainCNAMEValue"`
}

func (x Identities) call(ctx context.Context, method, path string, in, out any) error {
	h := http.Header{"X-Postmark-Account-Token": {x.token}}
	status, body, err := provider.IdentityCall(ctx, x.p.http, method, x.p.root+path, h, in)
	if err != nil {
		return err
	}
	if status >= 200 && status < 300 {
		if out != nil && json.Unmarshal(body, out) != nil {
			return provider.Errorf(notify.FailureUnknown, "Postmark %s %s: answer is not JSON", method, path)
		}
		return nil
	}
	var e struct {
		ErrorCode int    `json:"ErrorCode"`
		Message   string `json:"Message"`
	}
	_ = json.Unmarshal(body, &e)
	switch {
	case e.ErrorCode == codeSenderNotFound || e.ErrorCode == codeDomainNotFound || status == http.StatusNotFound:
		return notify.ErrIdentityNotFound
	// 504 is a second sender signature; a second domain's code is not
	// documented (UNCONFIRMED): its message says it exists already.
	case e.ErrorCode == codeSenderExists || strings.Contains(strings.ToLower(e.Message), "already exists"):
		return notify.ErrIdentityExists
	case status == http.StatusUnprocessableEntity:
		return &notify.IdentityRefused{Message: "Postmark: " + e.Message}
	}
	return provider.Errorf(notify.FailureUnknown, "Postmark %s %s: HTTP %d ErrorCode %d: %s", method, path, status, e.ErrorCode, e.Message)
}

// VerifyAddress creates a sender signature: Postmark mails a confirmation
// link to the address.
func (x Identities) VerifyAddress(ctx context.Context, address string) (*notify.VendorIdentity, error) {
	var out sender
	in := map[string]string{"FromEmail": address, "Name": x.p.cfg.FromName}
	if err := x.call(ctx, http.MethodPost, "/senders", in, &out); err != nil {
		return nil, err
	}
	return senderIdentity(out, address), nil
}

func senderIdentity(s sender, address string) *notify.VendorIdentity {
	id := &notify.VendorIdentity{Type: notify.IdentityEmailAddress, Name: address, VendorID: strconv.FormatInt(s.ID, 10),
		Status: notify.IdentityPending, SPFInclude: spfInclude}
	if s.Confirmed {
		id.Status = notify.IdentityVerified
	}
	return id
}

// ConnectDomain creates the domain, with a return-path subdomain when asked.
func (x Identities) ConnectDomain(ctx context.Context, name string, o notify.DomainOptions) (*notify.VendorIdentity, error) {
	in := map[string]string{"Name": name}
	if o.MailFromSubdomain != "" {
		in["ReturnPathDomain"] = o.MailFromSubdomain + "." + name
	}
	var out domainDetails
	if err := x.call(ctx, http.MethodPost, "/domains", in, &out); err != nil {
		return nil, err
	}
	return domainIdentity(out, name), nil
}

// Get reads a sender signature, or asks Postmark to check a domain's DKIM
// and return path again (it checks them only on request).
func (x Identities) Get(ctx context.Context, typ, name, id string) (*notify.VendorIdentity, error) {
	if typ == notify.IdentityEmailAddress {
		if id == "" { // a signature made elsewhere: find it by address
			return x.findSender(ctx, name)
		}
		var out sender
		if err := x.call(ctx, http.MethodGet, "/senders/"+id, nil, &out); err != nil {
			return nil, err
		}
		return senderIdentity(out, name), nil
	}
	var out domainDetails
	if err := x.call(ctx, http.MethodGet, "/domains/"+id, nil, &out); err != nil {
		return nil, err
	}
	if !out.DKIMVerified {
		if err := x.call(ctx, http.MethodPut, "/domains/"+id+"/verifyDkim", nil, &out); err != nil {
			return nil, err
		}
	}
	if out.ReturnPathDomain != "" && !out.ReturnPathDomainVerified {
		if err := x.call(ctx, http.MethodPut, "/domains/"+id+"/verifyReturnPath", nil, &out); err != nil {
			return nil, err
		}
	}
	return domainIdentity(out, name), nil
}

// findSender finds a sender signature in the account's list by address.
func (x Identities) findSender(ctx context.Context, address string) (*notify.VendorIdentity, error) {
	var list struct {
		SenderSignatures []sender `json:"SenderSignatures"`
	}
	if err := x.call(ctx, http.MethodGet, "/senders?count=500&offset=0", nil, &list); err != nil {
		return nil, err
	}
	for _, s := range list.SenderSignatures {
		if strings.EqualFold(s.EmailAddress, address) {
			return senderIdentity(s, address), nil
		}
	}
	return nil, notify.ErrIdentityNotFound
}

// FindDomain finds the domain in the account's list, then reads it.
func (x Identities) FindDomain(ctx context.Context, name string) (*notify.VendorIdentity, error) {
	var list struct {
		Domains []domainDetails `json:"Domains"`
	}
	if err := x.call(ctx, http.MethodGet, "/domains?count=500&offset=0", nil, &list); err != nil {
		return nil, err
	}
	for _, d := range list.Domains {
		if strings.EqualFold(d.Name, name) {
			var out domainDetails
			if err := x.call(ctx, http.MethodGet, "/domains/"+strconv.FormatInt(d.ID, 10), nil, &out); err != nil {
				return nil, err
			}
			return domainIdentity(out, name), nil
		}
	}
	return nil, notify.ErrIdentityNotFound
}

// domainIdentity lists the DKIM TXT record (the pending key until it is
// verified, then the active one) and the return-path CNAME.
func domainIdentity(d domainDetails, name string) *notify.VendorIdentity {
	id := &notify.VendorIdentity{Type: notify.IdentityDomain, Name: name, VendorID: strconv.FormatInt(d.ID, 10),
		Status: notify.IdentityPending, SPFInclude: spfInclude, MailFromDomain: strings.ToLower(d.ReturnPathDomain)}
	if d.DKIMVerified {
		id.Status = notify.IdentityVerified
	}
	host, value := d.DKIMPendingHost, d.DKIMPendingTextValue
	if host == "" {
		host, value = d.DKIMHost, d.DKIMTextValue
	}
	if host != "" {
		id.Records = append(id.Records, notify.DNSRecord{Purpose: "dkim", Type: "TXT", Name: provider.HostUnder(host, name), Value: value})
	}
	if d.ReturnPathDomain != "" {
		id.Records = append(id.Records, notify.DNSRecord{Purpose: "return_path", Type: "CNAME",
			Name: provider.HostUnder(d.ReturnPathDomain, name), Value: strings.TrimSuffix(d.ReturnPathDomainCNAMEValue, ".")})
	}
	return id
}
