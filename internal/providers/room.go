// Package providers is the room of provider accounts (the credentials of
// a workspace's vendors, sealed at rest), the routes that order them per
// channel, and test-sends through one account. The provider kinds,
// balances and the sending itself are the delivery engine's, reached
// through the Engine port; a balance cached there is forgotten once a
// configuration change commits.
package providers

import (
	"context"
	"log/slog"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/secret"
	"github.com/notifyd/notifyd/internal/usecase"
)

// Engine is the delivery engine as this room sees it.
type Engine interface {
	// KindChannel is the channel of a provider kind, and whether the kind
	// is known; KindIDs lists the known kinds, sorted.
	KindChannel(kind string) (notify.Channel, bool)
	KindIDs() []string
	// Quota is a provider account's balance, cached 60 s per account; nil
	// when the adapter has no balance API or the lookup failed.
	// ForgetQuota drops the cached one (the configuration changed).
	Quota(ctx context.Context, p *notify.ProviderAccount) *notify.Quota
	ForgetQuota(accountID string)
	// SendNow delivers a stored request whose caller waits for the
	// outcome (a test-send); the caller records it.
	SendNow(ctx context.Context, d notify.DirectSend) notify.DirectOutcome
}

// Options are what the room is built with.
type Options struct {
	Store  notify.Store
	Box    *secret.Box // seals and opens the accounts' configJson
	Now    func() time.Time
	Logger *slog.Logger
	// Engine knows the kinds and sends; nil knows no kind and shows no
	// balance (notifyd bootstrap).
	Engine Engine
}

// Service is the providers room.
type Service struct {
	usecase.Kit
	box    *secret.Box
	engine Engine
}

// New builds the room.
func New(o Options) *Service {
	return &Service{Kit: usecase.NewKit(o.Store, o.Now, o.Logger), box: o.Box, engine: o.Engine}
}
