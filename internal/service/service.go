// Package service holds the use cases. Each one authorizes, applies the
// domain rules and runs one store transaction. It knows nothing of HTTP,
// SQL or River.
package service

import (
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/notifyd/notifyd/internal/gate"
	"github.com/notifyd/notifyd/internal/mailcheck"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/secret"
	"github.com/notifyd/notifyd/internal/usecase"
)

// Options are the plain values a Service is built with.
type Options struct {
	Store         notify.Store
	Box           *secret.Box
	Now           func() time.Time
	Logger        *slog.Logger
	JobAttempts   int           // SVC_QUEUE_JOB_ATTEMPTS, default 3
	Backoff       time.Duration // SVC_QUEUE_BACKOFF_MS, default 3s
	HMACTolerance time.Duration // default 300s (the Gate built when Gate is nil)
	// Gate is the signed API's door (internal/gate), shared with the API;
	// nil builds one on Store and Box.
	Gate *gate.Gate
	// OptInKey signs the double opt-in confirmation links (optin.go);
	// default a random per-process key.
	OptInKey []byte
	// BaseURL is the public base URL (NOTIFYD_BASE_URL) confirmation
	// links start with: one value for every path that mails one (API,
	// console), so no caller can leave it out.
	BaseURL string
	// MailCheck checks subscriber domains by DNS; nil skips the check.
	MailCheck *mailcheck.Checker
	// AcceptWriters is how many send group commits may run at once;
	// default 1. One is best on both backends as measured (docs/
	// BENCHMARKS.md): SQLite has one writer, and on PostgreSQL concurrent
	// batches are smaller and wait on each other's request-limit counters.
	AcceptWriters int
	// FanoutWriters is how many batches of a campaign's fan-out may be
	// written at once; default 1. On PostgreSQL two overlap their COPYs
	// and round trips (docs/BENCHMARKS.md, session 11); SQLite has one
	// writer, so more would only wait.
	FanoutWriters int
}

// Service is the set of use cases.
type Service struct {
	usecase.Kit
	box         *secret.Box
	jobAttempts int
	backoff     time.Duration
	optInKey    []byte
	baseURL     string // public base URL, without a trailing slash
	mailCheck   *mailcheck.Checker
	fanoutMu    sync.Mutex
	fanoutFault FanoutFault // tests: SetFanoutFault
	gate        *gate.Gate  // the signed API's door: signatures, nonces, request limits
	accept      *acceptor   // the send group commit (accept.go)

	fanoutWriters int      // batches of a fan-out written at once (fanout.go)
	fanoutResume  sync.Map // fan-out job ID → the cursor its next run starts after (fanout.go)
}

// New builds a Service.
func New(o Options) *Service {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.JobAttempts == 0 {
		o.JobAttempts = 3
	}
	if o.Backoff == 0 {
		o.Backoff = 3 * time.Second
	}
	if o.HMACTolerance == 0 {
		o.HMACTolerance = 300 * time.Second
	}
	s := &Service{Kit: usecase.NewKit(o.Store, o.Now, o.Logger), box: o.Box,
		jobAttempts: o.JobAttempts, backoff: o.Backoff, baseURL: strings.TrimRight(o.BaseURL, "/")}
	if s.gate = o.Gate; s.gate == nil {
		s.gate = gate.New(gate.Options{Store: o.Store, Box: o.Box, Now: o.Now, Logger: o.Logger, Tolerance: o.HMACTolerance})
	}
	s.accept = newAcceptor(s, o.AcceptWriters)
	s.fanoutWriters = max(o.FanoutWriters, 1)
	s.mailCheck = o.MailCheck
	if s.optInKey = o.OptInKey; len(s.optInKey) == 0 {
		s.optInKey = usecase.RandomKey()
	}
	return s
}
