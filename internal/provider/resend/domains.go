package resend

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider"
)

// Resend's domains API (POST /domains, GET /domains[/{id}], POST
// /domains/{id}/verify). Resend verifies domains only: it has no API to
// verify a single sender address.

// spfInclude: Resend sends through Amazon SES, and its SPF record says so.
const spfInclude = "amazonses.com"

// Domains is the identity API of one Resend account.
type Domains struct{ p *Provider }

// Interface guard.
var _ notify.IdentityAPI = Domains{}

// newIdentities builds the domains API of one Resend account.
func newIdentities(c Config, deps provider.Deps) (notify.IdentityAPI, error) {
	p, err := newProvider(c, deps)
	if err != nil {
		return nil, err
	}
	return Domains{p.(*Provider)}, nil
}

type domainRecord struct {
	Record   string `json:"record"` // SPF, DKIM, Tracking, ...
	Name     string `json:"name"`
	Type     string `json:"type"`
	Value    string `json:"value"`
	Priority int    `json:"priority"`
}

type domain struct {
	ID      string         `json:"id"`
	Name    string         `json:"name"`
	Status  string         `json:"status"` // not_started, pending, verified, failed, temporary_failure
	Records []domainRecord `json:"records"`
}

// call makes one call and decodes a 2xx answer into out.
func (d Domains) call(ctx context.Context, method, path string, in, out any) error {
	h := http.Header{"Authorization": {"Bearer " + d.p.cfg.APIKey}}
	status, body, err := provider.IdentityCall(ctx, d.p.http, method, d.p.root+path, h, in)
	if err != nil {
		return err
	}
	if status >= 200 && status < 300 {
		if out != nil && json.Unmarshal(body, out) != nil {
			return provider.Errorf(notify.FailureUnknown, "Resend %s %s: answer is not JSON", method, path)
		}
		return nil
	}
	var e struct {
		Name    string `json:"name"`
		Message string `json:"message"`
	}
	_ = json.Unmarshal(body, &e)
	switch {
	case status == http.StatusNotFound:
		return notify.ErrIdentityNotFound
	// Resend answers a second registration of a domain with a
	// validation_error saying it is registered already (UNCONFIRMED: the
	// status and wording are not documented).
	case strings.Contains(strings.ToLower(e.Message), "already"):
		return notify.ErrIdentityExists
	case status == http.StatusUnprocessableEntity || status == http.StatusBadRequest:
		return &notify.IdentityRefused{Message: "Resend: " + e.Message}
	}
	return provider.Errorf(notify.FailureUnknown, "Resend %s %s: HTTP %d %s: %s", method, path, status, e.Name, e.Message)
}

// VerifyAddress: Resend verifies domains only.
func (Domains) VerifyAddress(context.Context, string) (*notify.VendorIdentity, error) {
	return nil, notify.ErrIdentityUnsupported
}

// ConnectDomain adds the domain and asks Resend to start checking its DNS.
func (d Domains) ConnectDomain(ctx context.Context, name string, o notify.DomainOptions) (*notify.VendorIdentity, error) {
	in := map[string]string{"name": name}
	if o.MailFromSubdomain != "" {
		in["custom_return_path"] = o.MailFromSubdomain
	}
	var out domain
	if err := d.call(ctx, http.MethodPost, "/domains", in, &out); err != nil {
		return nil, err
	}
	if err := d.call(ctx, http.MethodPost, "/domains/"+url.PathEscape(out.ID)+"/verify", nil, nil); err != nil {
		return nil, err
	}
	if out.Status == "not_started" {
		out.Status = "pending"
	}
	return identityOf(out, name), nil
}

// Get reads a domain; one that Resend has not checked yet, or gave up on,
// is sent to verification again (Resend checks only on request).
func (d Domains) Get(ctx context.Context, _, name, id string) (*notify.VendorIdentity, error) {
	var out domain
	if err := d.call(ctx, http.MethodGet, "/domains/"+url.PathEscape(id), nil, &out); err != nil {
		return nil, err
	}
	if out.Status == "not_started" || out.Status == "failed" {
		if err := d.call(ctx, http.MethodPost, "/domains/"+url.PathEscape(id)+"/verify", nil, nil); err != nil {
			return nil, err
		}
		out.Status = "pending"
	}
	return identityOf(out, name), nil
}

// FindDomain finds the domain in the account's list, then reads it.
func (d Domains) FindDomain(ctx context.Context, name string) (*notify.VendorIdentity, error) {
	var list struct {
		Data []domain `json:"data"`
	}
	if err := d.call(ctx, http.MethodGet, "/domains", nil, &list); err != nil {
		return nil, err
	}
	for _, x := range list.Data {
		if strings.EqualFold(x.Name, name) {
			var out domain
			if err := d.call(ctx, http.MethodGet, "/domains/"+url.PathEscape(x.ID), nil, &out); err != nil {
				return nil, err
			}
			return identityOf(out, name), nil
		}
	}
	return nil, notify.ErrIdentityNotFound
}

func identityOf(d domain, name string) *notify.VendorIdentity {
	id := &notify.VendorIdentity{Type: notify.IdentityDomain, Name: name, VendorID: d.ID, SPFInclude: spfInclude}
	switch d.Status {
	case "verified":
		id.Status = notify.IdentityVerified
	case "failed":
		id.Status = notify.IdentityFailed
	default:
		id.Status = notify.IdentityPending
	}
	for _, r := range d.Records {
		rec := notify.DNSRecord{Type: strings.ToUpper(r.Type), Name: provider.HostUnder(r.Name, name), Value: strings.Trim(r.Value, `"`)}
		switch {
		case r.Record == "DKIM":
			rec.Purpose = "dkim"
		case r.Record == "SPF" && rec.Type == "MX":
			rec.Purpose, rec.Priority = "mail_from_mx", r.Priority
			id.MailFromDomain = rec.Name
		case r.Record == "SPF":
			rec.Purpose = "spf"
		default:
			continue // tracking and receiving records are optional
		}
		if rec.Type == "CNAME" {
			rec.Value = strings.TrimSuffix(rec.Value, ".")
		}
		id.Records = append(id.Records, rec)
	}
	return id
}
