package ses

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider"
)

// SES v2 email-identity calls (CreateEmailIdentity, GetEmailIdentity,
// PutEmailIdentityMailFromAttributes), signed like SendEmail with the SDK's
// SigV4 signer and sent by provider.Do: the sesv2 client would add a
// dependency for three JSON calls that the signer already serves.
const identitiesPath = "/v2/email/identities"

// spfInclude is the SPF mechanism that authorizes SES's servers.
const spfInclude = "amazonses.com"

// Interface guard.
var _ notify.IdentityAPI = (*Provider)(nil)

// newIdentities builds the identity API of one SES account.
func newIdentities(c Config, deps provider.Deps) (notify.IdentityAPI, error) {
	p, err := newProvider(c, deps)
	if err != nil {
		return nil, err
	}
	return p.(*Provider), nil
}

// getIdentityOutput is GetEmailIdentity's answer (and, without
// MailFromAttributes, CreateEmailIdentity's).
type getIdentityOutput struct {
	IdentityType             string `json:"IdentityType"`
	VerifiedForSendingStatus bool   `json:"VerifiedForSendingStatus"`
	VerificationStatus       string `json:"VerificationStatus"`
	DkimAttributes           *struct {
		Status string   `json:"Status"`
		Tokens []string `json:"Tokens"`
	} `json:"DkimAttributes"`
	MailFromAttributes *struct {
		MailFromDomain       string `json:"MailFromDomain"`
		MailFromDomainStatus string `json:"MailFromDomainStatus"`
	} `json:"MailFromAttributes"`
}

// identityCall makes one signed call and returns the answer body of a 2xx;
// an SES error type comes back as apiError.
func (p *Provider) identityCall(ctx context.Context, method, path string, in any) ([]byte, error) {
	var body []byte
	if in != nil {
		var err error
		if body, err = provider.EncodeJSON(in); err != nil {
			return nil, err
		}
	}
	call, perr := p.signedCall(ctx, method, p.root+path, body)
	if perr != nil {
		return nil, perr
	}
	ex, raw, perr := provider.Do(ctx, p.http, call)
	if ex.Response == nil {
		return nil, perr
	}
	if s := ex.Response.HTTPStatus; s >= 200 && s < 300 {
		return raw, nil
	}
	var b struct {
		Type    string `json:"__type"`
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	_ = json.Unmarshal(raw, &b)
	switch errorType(headerValue(ex.Response.Headers, "X-Amzn-Errortype"), b.Type, b.Code) {
	case "NotFoundException":
		return nil, notify.ErrIdentityNotFound
	case "AlreadyExistsException":
		return nil, notify.ErrIdentityExists
	case "BadRequestException":
		return nil, &notify.IdentityRefused{Message: "SES: " + strings.TrimSpace(b.Message)}
	}
	return nil, classify(ex, raw, perr)
}

func identityPath(name string) string { return identitiesPath + "/" + url.PathEscape(name) }

// VerifyAddress creates an email-address identity: SES mails the address a
// verification link.
func (p *Provider) VerifyAddress(ctx context.Context, address string) (*notify.VendorIdentity, error) {
	if _, err := p.identityCall(ctx, http.MethodPost, identitiesPath, map[string]string{"EmailIdentity": address}); err != nil {
		return nil, err
	}
	return p.Get(ctx, notify.IdentityEmailAddress, address, "")
}

// ConnectDomain creates a domain identity with Easy DKIM (SES's default
// when no DkimSigningAttributes are given) and, when asked, a custom MAIL
// FROM subdomain.
func (p *Provider) ConnectDomain(ctx context.Context, domain string, o notify.DomainOptions) (*notify.VendorIdentity, error) {
	if _, err := p.identityCall(ctx, http.MethodPost, identitiesPath, map[string]string{"EmailIdentity": domain}); err != nil {
		return nil, err
	}
	if o.MailFromSubdomain != "" {
		in := map[string]string{"MailFromDomain": o.MailFromSubdomain + "." + domain, "BehaviorOnMxFailure": "USE_DEFAULT_VALUE"}
		if _, err := p.identityCall(ctx, http.MethodPut, identityPath(domain)+"/mail-from", in); err != nil {
			return nil, err
		}
	}
	return p.Get(ctx, notify.IdentityDomain, domain, "")
}

// FindDomain reads an existing domain identity.
func (p *Provider) FindDomain(ctx context.Context, domain string) (*notify.VendorIdentity, error) {
	return p.Get(ctx, notify.IdentityDomain, domain, "")
}

// Get reads an identity with GetEmailIdentity; SES re-checks DNS by itself.
func (p *Provider) Get(ctx context.Context, typ, name, _ string) (*notify.VendorIdentity, error) {
	raw, err := p.identityCall(ctx, http.MethodGet, identityPath(name), nil)
	if err != nil {
		return nil, err
	}
	var out getIdentityOutput
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, provider.Errorf(notify.FailureUnknown, "SES GetEmailIdentity: answer is not JSON")
	}
	id := &notify.VendorIdentity{Type: typ, Name: name, Status: sesStatus(out), SPFInclude: spfInclude}
	if typ != notify.IdentityDomain {
		return id, nil
	}
	if d := out.DkimAttributes; d != nil {
		for _, t := range d.Tokens {
			id.Records = append(id.Records, notify.DNSRecord{Purpose: "dkim", Type: "CNAME",
				Name: t + "._domainkey." + name, Value: t + ".dkim.amazonses.com"})
		}
	}
	if m := out.MailFromAttributes; m != nil && m.MailFromDomain != "" {
		id.MailFromDomain = m.MailFromDomain
		id.Records = append(id.Records,
			notify.DNSRecord{Purpose: "mail_from_mx", Type: "MX", Name: m.MailFromDomain,
				Value: "feedback-smtp." + p.cfg.Region + ".amazonses.com", Priority: 10},
			notify.DNSRecord{Purpose: "spf", Type: "TXT", Name: m.MailFromDomain, Value: "v=spf1 include:" + spfInclude + " ~all"})
	}
	return id, nil
}

// sesStatus normalizes VerificationStatus (PENDING, SUCCESS, FAILED,
// TEMPORARY_FAILURE, NOT_STARTED), falling back to VerifiedForSendingStatus.
func sesStatus(o getIdentityOutput) string {
	switch o.VerificationStatus {
	case "SUCCESS":
		return notify.IdentityVerified
	case "FAILED":
		return notify.IdentityFailed
	case "":
		if o.VerifiedForSendingStatus {
			return notify.IdentityVerified
		}
	}
	return notify.IdentityPending
}
