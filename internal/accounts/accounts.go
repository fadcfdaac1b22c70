// Package accounts is the room of who may use notifyd: workspaces and
// their first owner (bootstrap), login with its throttle, sessions and
// the password rule, members and invitations, the audit log's listing,
// API keys and the rekey of stored secrets. The API's and the console's
// session handling authenticate through it. It stands on the domain and
// the use-case ground and reaches no HTTP, SQL or queue.
package accounts

import (
	"log/slog"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/secret"
	"github.com/notifyd/notifyd/internal/usecase"
)

// KeyCache is where the signed API caches API keys (internal/gate); a key
// change drops the key there once it is committed.
type KeyCache interface{ ForgetKey(keyID string) }

// Options are the plain values the room is built with.
type Options struct {
	Store  notify.Store
	Box    *secret.Box // seals API keys' HMAC secrets; rekey re-seals under its primary key
	Now    func() time.Time
	Logger *slog.Logger
	// SessionTTL is how long a dashboard session lasts; default 12h.
	SessionTTL time.Duration
	// Keys is the signed API's key cache; nil (bootstrap, rekey): no
	// cache to tell.
	Keys KeyCache
}

// Service holds the accounts' use cases.
type Service struct {
	usecase.Kit
	box    *secret.Box
	ttl    time.Duration
	logins *loginThrottle
	keys   KeyCache
}

// New builds the room.
func New(o Options) *Service {
	if o.SessionTTL == 0 {
		o.SessionTTL = 12 * time.Hour
	}
	kit := usecase.NewKit(o.Store, o.Now, o.Logger)
	return &Service{Kit: kit, box: o.Box, ttl: o.SessionTTL, logins: newLoginThrottle(kit), keys: o.Keys}
}
