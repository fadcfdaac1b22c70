// Package receipts is the room of delivery receipts (issue 35): what the
// vendors report, after accepting a message, about its arrival. It polls
// the result APIs of the SMS and AlimTalk kinds on a schedule until a
// report is final or the receipt's deadline passes, applies the e-mail
// kinds' delivery callbacks, writes the receipt events, and moves a
// request whose report says undelivered along its channel fallback.
// Receipts are created by the delivery engine with the send's outcome.
package receipts

import (
	"context"
	"log/slog"
	"time"

	"github.com/notifyd/notifyd/internal/groupcommit"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/usecase"
)

// Reporters builds the delivery-report lookup of a provider account.
type Reporters interface {
	// ReportAPI is the lookup of account p; ok is false when its kind has
	// no result API.
	ReportAPI(p *notify.ProviderAccount) (api notify.ReportAPI, ok bool, err error)
}

// DefaultSchedule is the wait before each further lookup of a pending
// receipt (after the first, which the engine schedules); the last wait
// repeats until the deadline (docs/DECISIONS.md "Delivery receipts").
var DefaultSchedule = []time.Duration{10 * time.Second, 30 * time.Second, time.Minute, 2 * time.Minute, 5 * time.Minute,
	10 * time.Minute, 30 * time.Minute, time.Hour}

// DefaultFallbackWindow is how long after the send an undelivered report
// may still move a request along its channel fallback.
const DefaultFallbackWindow = time.Hour

// Options are what the room is built with.
type Options struct {
	Store     notify.Store
	Now       func() time.Time
	Logger    *slog.Logger
	Reporters Reporters
	// Schedule is the wait before each further lookup (nil:
	// DefaultSchedule).
	Schedule []time.Duration
	// FallbackWindow bounds the undelivered fallback (zero:
	// DefaultFallbackWindow; negative: never).
	FallbackWindow time.Duration
	// Metrics counts the receipts that become final; nil counts nothing.
	Metrics Counter
	// Commit, when set, runs a pushed report's writes (Apply) in a
	// transaction shared with other writers; nil uses the store's urgent
	// group commit (Store.BatchUrgent).
	Commit Committer
	// ReportShare bounds the share of the time the batches of pushed
	// reports take while reports keep coming: after a batch that took d,
	// the next one starts no sooner than d×(1/ReportShare−1) later (at
	// most maxReportPause), and the reports that arrive meanwhile join
	// it. Zero, or 1 or more: no pause. The daemon sets PostgresReportShare
	// on PostgreSQL.
	ReportShare float64
}

// PostgresReportShare is the share of the time pushed reports' batches
// take at most on PostgreSQL while reports keep coming: a burst of vendor
// callbacks yields three quarters of it to the sends, and is applied in
// larger batches (docs/DECISIONS.md "Pushed reports yield to the sends").
// SQLite's reports ride in the send group commit, where a batch's time is
// mostly its wait for that commit: a pause there only starved them.
const PostgresReportShare = 0.25

// maxReportPause bounds the pause after one batch of pushed reports: a
// report waits at most this long for the previous batch's pause.
const maxReportPause = 250 * time.Millisecond

// Committer runs fn in a write transaction shared with concurrent
// callers, answering once it committed (the daemon wires the send group
// commit: a report then rides in a commit the sends make anyway instead
// of taking the one writer for a commit of its own). fn may run again,
// from scratch, when its transaction is retried.
type Committer interface {
	CommitShared(ctx context.Context, fn func(tx notify.Tx) error) error
}

// Counter counts receipts that became final (the daemon's
// metrics.Receipts).
type Counter interface {
	Final(channel, kind, status string)
}

// Service is the receipts room.
type Service struct {
	usecase.Kit
	reporters Reporters
	schedule  []time.Duration
	window    time.Duration
	metrics   Counter
	commit    Committer
	// pushq gathers the pushed reports that move no request, settled a
	// batch at a time (settleBatch).
	pushq *groupcommit.Queue[*pushCall]
	// pause is the pause after a batch of pushed reports per unit of the
	// batch's time (Options.ReportShare).
	pause float64
}

// New builds the room.
func New(o Options) *Service {
	s := &Service{Kit: usecase.NewKit(o.Store, o.Now, o.Logger), reporters: o.Reporters, schedule: o.Schedule, window: o.FallbackWindow,
		metrics: o.Metrics, commit: o.Commit}
	if len(s.schedule) == 0 {
		s.schedule = DefaultSchedule
	}
	if s.window == 0 {
		s.window = DefaultFallbackWindow
	}
	if s.metrics == nil {
		s.metrics = noCounter{}
	}
	if s.commit == nil {
		s.commit = urgentBatch{o.Store}
	}
	if share := o.ReportShare; share > 0 && share < 1 {
		s.pause = 1/share - 1
	}
	// One batch at a time: the reports that arrive while it commits make
	// the next one.
	s.pushq = groupcommit.New(1, maxPushBatch, s.settleBatch)
	return s
}

// maxPushBatch bounds the pushed reports settled in one statement.
const maxPushBatch = 256

// urgentBatch is the store's urgent group commit as a Committer.
type urgentBatch struct{ store notify.Store }

func (u urgentBatch) CommitShared(ctx context.Context, fn func(tx notify.Tx) error) error {
	return u.store.BatchUrgent(ctx, fn)
}

// noCounter counts nothing.
type noCounter struct{}

func (noCounter) Final(string, string, string) {}
