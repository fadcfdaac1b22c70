// Package recipients is the room of recipient profiles (issue 32): a
// workspace's profile of each person it sends to, keyed by the
// application's own id, with the person's addresses per channel, time
// zone, locale and attributes. Sends by recipient id, categories,
// preferences and send windows (issue 32, items 2 to 7) build on it.
package recipients

import (
	"context"
	"log/slog"
	"time"

	// Time zones are checked with time.LoadLocation: the zone database is
	// embedded so that every node accepts the same names whatever its host
	// has installed (a distroless or scratch image may have none).
	_ "time/tzdata"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/usecase"
)

// Options are what the room is built with.
type Options struct {
	Store  notify.Store
	Now    func() time.Time
	Logger *slog.Logger
}

// Service is the recipients room.
type Service struct {
	usecase.Kit
}

// New builds the room.
func New(o Options) *Service {
	return &Service{Kit: usecase.NewKit(o.Store, o.Now, o.Logger)}
}

// Caller is who acts on the profiles: a dashboard member or a signed API
// key.
type Caller = usecase.Caller

// audit writes one audit entry of the caller (usecase.Kit.AuditAs).
func (s *Service) audit(ctx context.Context, tx notify.Tx, c Caller, action, target string, payload map[string]any) error {
	return s.AuditAs(ctx, tx, c, action, "recipient", target, payload)
}
