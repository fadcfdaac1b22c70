// Package gate is the door of the signed API: who signed a request (its
// API key, the HMAC signature, the nonce that makes it single-use, a
// cache of keys with their opened secrets) and whether the workspace and
// the key may make it now (SPEC's request limits). Every signed route
// passes it; the send group commit admits its batches through it
// (Admit). It holds no use case: rooms and handlers call it.
package gate

import (
	"log/slog"
	"sync"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/secret"
	"github.com/notifyd/notifyd/internal/usecase"
)

// Options are the plain values a Gate is built with.
type Options struct {
	Store  notify.Store
	Box    *secret.Box
	Now    func() time.Time
	Logger *slog.Logger
	// Tolerance is the allowed clock skew of X-Timestamp
	// (NOTIFYD_HMAC_TOLERANCE_SECONDS); default 300 s.
	Tolerance time.Duration
}

// Gate checks signed requests and applies the request limits.
type Gate struct {
	usecase.Kit
	box     *secret.Box
	tol     time.Duration
	keys    *keyCache   // API keys of signed sends (keycache.go)
	rates   *rateChecks // request-limit checks (ratebatch.go)
	touchMu sync.Mutex
	touched map[string]time.Time // when each key's last use was last written (admit.go)
}

// New builds a Gate.
func New(o Options) *Gate {
	if o.Tolerance == 0 {
		o.Tolerance = 300 * time.Second
	}
	g := &Gate{Kit: usecase.NewKit(o.Store, o.Now, o.Logger), box: o.Box, tol: o.Tolerance, keys: newKeyCache(),
		touched: map[string]time.Time{}}
	g.rates = newRateChecks(g)
	return g
}

// ForgetKey drops a cached API key: its owner changed it (rotated,
// suspended, revoked, rescoped) and committed the change.
func (g *Gate) ForgetKey(keyID string) { g.keys.forget(keyID) }
