package identities

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/notifyd/notifyd/internal/mailcheck"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/usecase"
)

// Sending identities (sender addresses and domains) of the e-mail provider
// accounts. The vendor holds the truth; notifyd records what it asked for
// and the state it last read, so that sends can be warned about before the
// vendor refuses them. Writes are audited with SPEC's mail-service
// integration actions, for every e-mail kind alike (as the callback
// secrets are).

// Audit actions (SPEC "Audit log").
const (
	auditIdentityVerify = "maily.email_identity.verify"
	auditDomainConnect  = "maily.domain.connect"
	auditDomainAdopt    = "maily.domain.adopt"
)

// identityAccount loads an e-mail provider account of the actor's
// workspace and builds its vendor's identity API.
func (s *Service) identityAccount(ctx context.Context, a *usecase.Actor, id string) (*notify.ProviderAccount, notify.IdentityAPI, error) {
	if !usecase.Storable(id) {
		return nil, nil, notify.NotFound("Provider")
	}
	var p *notify.ProviderAccount
	err := s.Store.View(ctx, func(tx notify.Tx) (err error) {
		p, err = tx.FindProviderAccount(ctx, a.WorkspaceID, id)
		return usecase.NotFound(err, "Provider")
	})
	if err != nil {
		return nil, nil, err
	}
	if p.Channel != notify.ChannelEmail {
		return nil, nil, notify.Invalid("Sending identities apply to email providers (mailx_email, maily_email, mailz_email); this provider is %s", p.ProviderKind)
	}
	cfg, err := usecase.OpenProviderConfig(s.box, p)
	if err != nil {
		return nil, nil, err
	}
	var api notify.IdentityAPI
	ok := false
	if s.engine != nil {
		api, ok, err = s.engine.IdentityAPI(p.ProviderKind, cfg)
	}
	if !ok {
		return nil, nil, notify.Invalid("The vendor of %s has no API for sending identities", p.ProviderKind)
	}
	var pe *notify.VendorCallError
	if errors.As(err, &pe) {
		return nil, nil, notify.Conflict("The provider's configJson cannot reach its vendor's identity API: %s", pe.Message)
	}
	if err != nil {
		return nil, nil, err
	}
	return p, api, nil
}

// vendorError maps an IdentityAPI error onto an API error.
func vendorError(err error, name string) error {
	var pe *notify.VendorCallError
	var ie *notify.IdentityRefused
	switch {
	case errors.As(err, &ie):
		return notify.Invalid("%s", ie.Message)
	case errors.Is(err, notify.ErrIdentityNotFound):
		return notify.Conflict("%s is not an identity of this provider's vendor account", name)
	case errors.Is(err, notify.ErrIdentityExists):
		return notify.Conflict("%s is already an identity of this provider's vendor account", name)
	case errors.Is(err, notify.ErrIdentityUnsupported):
		return notify.Invalid("This provider's vendor verifies domains only: connect the domain of %s instead", name)
	case errors.As(err, &pe):
		return notify.Errorf(notify.CodeProviderFailed, "Provider call failed: %s: %s", pe.Code, pe.Message)
	}
	return err
}

// normalizeDomain checks a domain name (letters, digits, hyphens; two or
// more labels; not under a suffix of private networks) and returns it in
// lower case without a trailing dot.
func normalizeDomain(field, d string) (string, error) {
	d = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(d)), ".")
	if _, err := mailcheck.Domain("postmaster@" + d); err != nil || d == "" {
		return "", notify.Invalid("%s must be a domain name such as example.com", field)
	}
	if err := publicDomain(field, d); err != nil {
		return "", err
	}
	return d, nil
}

// publicDomain refuses a domain under a suffix of private networks
// (.internal, .local, .lan, home.arpa, …): no vendor can verify it, and
// the DNS check would read the operator's internal zones for the tenant.
func publicDomain(field, d string) error {
	if tld := mailcheck.PrivateSuffix(d); tld != "" {
		return notify.Invalid("%s must be a public domain name: .%s is a suffix of private networks", field, tld)
	}
	return nil
}

// VerifyEmailIdentity asks the vendor to verify one sender address (audit
// maily.email_identity.verify): SES and Postmark mail it a confirmation
// link. An address the vendor account already has is taken over as it is.
func (s *Service) VerifyEmailIdentity(ctx context.Context, a *usecase.Actor, providerID, address string) (*notify.SendingIdentity, error) {
	addr := mailcheck.Normalize(address)
	if _, err := mailcheck.Domain(addr); err != nil {
		return nil, notify.Invalid("address must be a valid email address")
	}
	p, api, err := s.identityAccount(ctx, a, providerID)
	if err != nil {
		return nil, err
	}
	if err := s.untracked(ctx, p, notify.IdentityEmailAddress, addr); err != nil {
		return nil, err
	}
	existing := false
	id, err := api.VerifyAddress(ctx, addr)
	if errors.Is(err, notify.ErrIdentityExists) {
		existing = true
		if id, err = api.Get(ctx, notify.IdentityEmailAddress, addr, ""); err != nil {
			err = notify.ErrIdentityExists
		}
	}
	if err != nil {
		return nil, vendorError(err, addr)
	}
	return s.track(ctx, a, p, id, "verify", auditIdentityVerify, existing)
}

// ConnectDomain creates a domain identity at the vendor (audit
// maily.domain.connect) and answers the DNS records to publish. A domain
// the vendor account already has is read back, not created again.
func (s *Service) ConnectDomain(ctx context.Context, a *usecase.Actor, providerID, domain, mailFrom string) (*notify.SendingIdentity, error) {
	d, err := normalizeDomain("domain", domain)
	if err != nil {
		return nil, err
	}
	mailFrom = strings.ToLower(strings.TrimSpace(mailFrom))
	if mailFrom != "" {
		if _, err := normalizeDomain("mailFromSubdomain", mailFrom+"."+d); err != nil || strings.Contains(mailFrom, ".") {
			return nil, notify.Invalid("mailFromSubdomain must be one DNS label such as mail")
		}
	}
	p, api, err := s.identityAccount(ctx, a, providerID)
	if err != nil {
		return nil, err
	}
	if err := s.untracked(ctx, p, notify.IdentityDomain, d); err != nil {
		return nil, err
	}
	existing := false
	id, err := api.ConnectDomain(ctx, d, notify.DomainOptions{MailFromSubdomain: mailFrom})
	if errors.Is(err, notify.ErrIdentityExists) {
		existing = true
		id, err = api.FindDomain(ctx, d)
	}
	if err != nil {
		return nil, vendorError(err, d)
	}
	return s.track(ctx, a, p, id, "connect", auditDomainConnect, existing)
}

// AdoptDomain takes over a domain identity that already exists, verified,
// in the vendor account, without creating it again (audit
// maily.domain.adopt). A domain the account lacks, or has not verified,
// is 409.
func (s *Service) AdoptDomain(ctx context.Context, a *usecase.Actor, providerID, domain string) (*notify.SendingIdentity, error) {
	d, err := normalizeDomain("domain", domain)
	if err != nil {
		return nil, err
	}
	p, api, err := s.identityAccount(ctx, a, providerID)
	if err != nil {
		return nil, err
	}
	if err := s.untracked(ctx, p, notify.IdentityDomain, d); err != nil {
		return nil, err
	}
	id, err := api.FindDomain(ctx, d)
	if err != nil {
		return nil, vendorError(err, d)
	}
	if id.Status != notify.IdentityVerified {
		return nil, notify.Conflict("Domain %s is %s in the vendor account, not verified: connect it instead to see its records", d, id.Status)
	}
	return s.track(ctx, a, p, id, "adopt", auditDomainAdopt, true)
}

// untracked answers 409 when the account already tracks the identity,
// before the vendor is called.
func (s *Service) untracked(ctx context.Context, p *notify.ProviderAccount, typ, name string) error {
	return s.Store.View(ctx, func(tx notify.Tx) error {
		ids, err := tx.FindSendingIdentities(ctx, p.WorkspaceID, p.ID)
		if err != nil {
			return err
		}
		for _, x := range ids {
			if x.Type == typ && x.Name == name {
				return notify.Conflict("This provider already has the identity %s (%s)", name, x.ID)
			}
		}
		return nil
	})
}

// track stores what the vendor answered and audits the write.
func (s *Service) track(ctx context.Context, a *usecase.Actor, p *notify.ProviderAccount, id *notify.VendorIdentity, origin, action string, existing bool) (*notify.SendingIdentity, error) {
	now := s.Now()
	si := &notify.SendingIdentity{ID: usecase.NewID(), WorkspaceID: p.WorkspaceID, ProviderAccountID: p.ID, Origin: origin,
		CreatedAt: now}
	apply(si, id, now)
	err := s.Store.Update(ctx, func(tx notify.Tx) error {
		if _, err := tx.FindProviderAccount(ctx, a.WorkspaceID, p.ID); err != nil {
			return usecase.NotFound(err, "Provider")
		}
		if err := tx.CreateSendingIdentity(ctx, si); err != nil {
			if errors.Is(err, notify.ErrConflict) {
				return notify.Conflict("This provider already has the identity %s", si.Name)
			}
			return err
		}
		payload := map[string]any{"providerKind": p.ProviderKind, "identityId": si.ID, "type": si.Type, "identity": si.Name,
			"status": si.Status, "existing": existing}
		if si.MailFromDomain != "" {
			payload["mailFromDomain"] = si.MailFromDomain
		}
		return s.Audit(ctx, tx, a, a.WorkspaceID, action, "provider", p.ID, payload)
	})
	if err != nil {
		return nil, err
	}
	return si, nil
}

// apply copies the vendor's answer onto the stored identity.
func apply(si *notify.SendingIdentity, id *notify.VendorIdentity, now time.Time) {
	si.Type, si.Name, si.VendorID, si.Status = id.Type, id.Name, id.VendorID, id.Status
	si.MailFromDomain, si.SPFInclude, si.Records = id.MailFromDomain, id.SPFInclude, id.Records
	si.UpdatedAt, si.CheckedAt = now, now
	if id.Status == notify.IdentityVerified && si.VerifiedAt == nil {
		t := now
		si.VerifiedAt = &t
	}
}

// IdentityList is an account's identities and what they say of its
// configured from-address.
type IdentityList struct {
	Identities []*notify.SendingIdentity
	Sender     usecase.SenderStatus
}

// ListIdentities lists an account's identities as last read from the
// vendor (no vendor call), with its sender's status.
func (s *Service) ListIdentities(ctx context.Context, a *usecase.Actor, providerID string) (*IdentityList, error) {
	if !usecase.Storable(providerID) {
		return nil, notify.NotFound("Provider")
	}
	var out IdentityList
	err := s.Store.View(ctx, func(tx notify.Tx) error {
		p, err := tx.FindProviderAccount(ctx, a.WorkspaceID, providerID)
		if err != nil {
			return usecase.NotFound(err, "Provider")
		}
		if p.Channel != notify.ChannelEmail {
			return notify.Invalid("Sending identities apply to email providers (mailx_email, maily_email, mailz_email); this provider is %s", p.ProviderKind)
		}
		if out.Identities, err = tx.FindSendingIdentities(ctx, a.WorkspaceID, p.ID); err != nil {
			return err
		}
		out.Sender, err = usecase.SenderStatusOf(s.box, p, out.Identities)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// GetIdentity reads an identity's current state from the vendor (SES
// GetEmailIdentity; Resend and Postmark are asked to check DNS again when
// they have not verified it) and stores it.
func (s *Service) GetIdentity(ctx context.Context, a *usecase.Actor, providerID, identityID string) (*notify.SendingIdentity, error) {
	p, api, err := s.identityAccount(ctx, a, providerID)
	if err != nil {
		return nil, err
	}
	si, err := s.findIdentity(ctx, a, p.ID, identityID)
	if err != nil {
		return nil, err
	}
	id, err := api.Get(ctx, si.Type, si.Name, si.VendorID)
	if errors.Is(err, notify.ErrIdentityNotFound) {
		return nil, notify.Conflict("The vendor account no longer has the identity %s", si.Name)
	}
	if err != nil {
		return nil, vendorError(err, si.Name)
	}
	apply(si, id, s.Now())
	err = s.Store.Update(ctx, func(tx notify.Tx) error {
		return usecase.NotFound(tx.UpdateSendingIdentity(ctx, si), "Identity")
	})
	if err != nil {
		return nil, err
	}
	return si, nil
}

func (s *Service) findIdentity(ctx context.Context, a *usecase.Actor, providerID, identityID string) (*notify.SendingIdentity, error) {
	if !usecase.Storable(identityID) {
		return nil, notify.NotFound("Identity")
	}
	var si *notify.SendingIdentity
	err := s.Store.View(ctx, func(tx notify.Tx) (err error) {
		si, err = tx.FindSendingIdentity(ctx, a.WorkspaceID, providerID, identityID)
		return usecase.NotFound(err, "Identity")
	})
	return si, err
}

// SenderWarning is the warning of registration and test-send about the
// account's from-address; empty when it is verified or the provider is
// not an e-mail provider.
func (s *Service) SenderWarning(ctx context.Context, a *usecase.Actor, providerID string) (string, error) {
	return usecase.SenderWarning(ctx, s.Store, s.box, a.WorkspaceID, providerID)
}
