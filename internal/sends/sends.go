// Package sends is the room of sends: the Notification API's single and
// bulk sends with their validation, template resolution and rendering
// (internal/compose), cross-channel fallback, and the send group commit
// that writes many callers' requests, jobs and queue jobs in one
// transaction through the gate (nonces, request limits); status lookups,
// request and attempt history, cancel, and the dead-letter queue with its
// replay.
package sends

import (
	"log/slog"
	"time"

	"github.com/notifyd/notifyd/internal/gate"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/tracing"
	"github.com/notifyd/notifyd/internal/usecase"
)

// Options are the plain values the room is built with.
type Options struct {
	Store  notify.Store
	Now    func() time.Time
	Logger *slog.Logger
	// JobAttempts is the attempt budget of a request
	// (SVC_QUEUE_JOB_ATTEMPTS); default 3.
	JobAttempts int
	// PreferenceLink mints a profile's preference link and when it
	// expires (categories.Service.Link): {{preferencesUrl}} and the
	// List-Unsubscribe of category mail (issue 32, item 4). Nil: neither.
	PreferenceLink func(ws string, r *notify.Recipient, now time.Time) (string, time.Time)
	// Gate is the signed API's door (internal/gate), shared with the API:
	// the send group commit admits its batches through it.
	Gate *gate.Gate
	// AcceptWriters is how many send group commits may run at once;
	// default 1. One is best on both backends as measured (docs/
	// BENCHMARKS.md): SQLite has one writer, and on PostgreSQL concurrent
	// batches are smaller and wait on each other's request-limit counters.
	AcceptWriters int
	// Tracer traces the send group commit and carries each accepted
	// request's trace to its dispatch job; nil: tracing off.
	Tracer *tracing.Tracer
}

// Service is the sends room.
type Service struct {
	usecase.Kit
	jobAttempts int
	gate        *gate.Gate // the signed API's door: signatures, nonces, request limits
	accept      *acceptor  // the send group commit (accept.go)
	tracer      *tracing.Tracer
	// preferenceLink is Options.PreferenceLink.
	preferenceLink func(ws string, r *notify.Recipient, now time.Time) (string, time.Time)
}

// New builds the room.
func New(o Options) *Service {
	s := &Service{Kit: usecase.NewKit(o.Store, o.Now, o.Logger), jobAttempts: o.JobAttempts, gate: o.Gate,
		preferenceLink: o.PreferenceLink, tracer: o.Tracer}
	if s.jobAttempts == 0 {
		s.jobAttempts = 3
	}
	s.accept = newAcceptor(s, o.AcceptWriters)
	return s
}
