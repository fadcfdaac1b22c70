package delivery

import (
	"context"
	"errors"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider"
)

// KindChannel is the channel of the provider kind with id kind, and
// whether that kind is known.
func (e *Engine) KindChannel(kind string) (notify.Channel, bool) {
	k, ok := e.kinds[kind]
	if !ok {
		return "", false
	}
	return k.Channel, true
}

// KindIDs lists the known provider kinds, sorted.
func (e *Engine) KindIDs() []string { return e.kinds.IDs() }

// IdentityAPI builds the sender-identity API of an account of kind from
// its decrypted configJson, with the adapters' HTTP client (SSRF guard
// included). ok is false when the kind's vendor has none. The adapters'
// classified errors reach the caller as *notify.VendorCallError (a
// configuration the API cannot work with included).
func (e *Engine) IdentityAPI(kind string, cfg map[string]string) (api notify.IdentityAPI, ok bool, err error) {
	k, known := e.kinds[kind]
	if !known || k.Identities == nil {
		return nil, false, nil
	}
	a, err := k.Identities(provider.Config(cfg), e.deps)
	if err != nil {
		return nil, true, vendorCallError(err)
	}
	return identityAPI{a}, true, nil
}

// vendorCallError turns an adapter's *provider.Error into the domain's.
func vendorCallError(err error) error {
	var pe *provider.Error
	if errors.As(err, &pe) {
		return &notify.VendorCallError{Code: pe.Code, Message: pe.Message}
	}
	return err
}

// identityAPI hands an adapter's identity API on with domain errors.
type identityAPI struct{ a notify.IdentityAPI }

func (x identityAPI) VerifyAddress(ctx context.Context, address string) (*notify.VendorIdentity, error) {
	id, err := x.a.VerifyAddress(ctx, address)
	return id, vendorCallError(err)
}

func (x identityAPI) ConnectDomain(ctx context.Context, domain string, o notify.DomainOptions) (*notify.VendorIdentity, error) {
	id, err := x.a.ConnectDomain(ctx, domain, o)
	return id, vendorCallError(err)
}

func (x identityAPI) Get(ctx context.Context, typ, name, vendorID string) (*notify.VendorIdentity, error) {
	id, err := x.a.Get(ctx, typ, name, vendorID)
	return id, vendorCallError(err)
}

func (x identityAPI) FindDomain(ctx context.Context, domain string) (*notify.VendorIdentity, error) {
	id, err := x.a.FindDomain(ctx, domain)
	return id, vendorCallError(err)
}
