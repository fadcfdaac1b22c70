package delivery

import (
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
// included). ok is false when the kind's vendor has no such API.
func (e *Engine) IdentityAPI(kind string, cfg provider.Config) (api provider.IdentityAPI, ok bool, err error) {
	k, known := e.kinds[kind]
	if !known || k.Identities == nil {
		return nil, false, nil
	}
	api, err = k.Identities(cfg, e.deps)
	return api, true, err
}
