// Package identities is the room of sending identities: the sender
// addresses and domains of the e-mail provider accounts as their vendors
// hold them (verify an address, connect or adopt a domain, read their
// state), and the DNS check of a sending domain. The vendors' identity
// APIs come through the Engine port; DNS lookups through the resolver the
// room is built with.
package identities

import (
	"log/slog"
	"time"

	"github.com/notifyd/notifyd/internal/mailcheck"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/secret"
	"github.com/notifyd/notifyd/internal/usecase"
)

// Engine builds the sender-identity API of a provider account.
type Engine interface {
	// IdentityAPI builds the sender-identity API of an account of kind
	// from its configJson; ok is false when the kind has none.
	IdentityAPI(kind string, cfg map[string]string) (api notify.IdentityAPI, ok bool, err error)
}

// Options are what the room is built with.
type Options struct {
	Store  notify.Store
	Box    *secret.Box // opens the accounts' configJson
	Now    func() time.Time
	Logger *slog.Logger
	// Engine builds the vendors' identity APIs; nil knows none.
	Engine Engine
	// DNS looks up the records of sending domains; nil is the system
	// resolver.
	DNS *mailcheck.Checker
}

// Service is the identities room.
type Service struct {
	usecase.Kit
	box    *secret.Box
	engine Engine
	dns    *mailcheck.Checker
}

// New builds the room.
func New(o Options) *Service {
	s := &Service{Kit: usecase.NewKit(o.Store, o.Now, o.Logger), box: o.Box, engine: o.Engine, dns: o.DNS}
	if s.dns == nil {
		s.dns = mailcheck.New("", 0)
	}
	return s
}
