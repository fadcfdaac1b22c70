// Package delivery is the delivery engine: it runs a queue job's requests
// through their routes (circuit breakers, dispatch limits, adapter
// batching, the vendor calls) and records the outcomes. The worker drives
// it one queue job (a batch of requests) at a time with RunJob; OTP and
// provider test-sends, whose caller waits for the answer, use SendNow.
//
// A run is batch-shaped end to end: one transaction claims every request
// of the job, the requests are sent concurrently (those of a batching
// vendor share its calls), and one transaction records every attempt,
// state, job row and event with multi-row statements. Routes, accounts
// and breakers are read once per run; shared breaker rows are written
// only when a circuit changes.
package delivery

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/notifyd/notifyd/internal/delivery/pacing"
	"github.com/notifyd/notifyd/internal/dispatch"
	"github.com/notifyd/notifyd/internal/groupcommit"
	"github.com/notifyd/notifyd/internal/metrics"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider"
	"github.com/notifyd/notifyd/internal/provider/kinds"
	"github.com/notifyd/notifyd/internal/secret"
	"github.com/notifyd/notifyd/internal/tracing"
)

// Options are the plain values an Engine is built with.
type Options struct {
	Store  notify.Store
	Box    *secret.Box // opens provider configJson
	Kinds  kinds.Registry
	Deps   provider.Deps
	Now    func() time.Time
	Logger *slog.Logger
	// Backoff is SVC_QUEUE_BACKOFF_MS: the first job-level retry delay,
	// doubled per attempt; default 3 s.
	Backoff time.Duration
	// Metrics of dispatch limits; nil records nothing. MaxWaiters bounds
	// the sends sleeping on dispatch limits at once (default
	// DefaultDispatchMaxWaiters).
	Metrics *metrics.Limits
	// Takeovers counts the requests taken over from dead runs; nil
	// records nothing.
	Takeovers  *metrics.Takeovers
	MaxWaiters int
	// TransactionalShare is the share (0 to 1) of every dispatch limit
	// kept for transactional sends while bulk work waits
	// (NOTIFYD_TRANSACTIONAL_SHARE); zero keeps none.
	TransactionalShare float64
	// BatchObserver is told about every adapter batch (metrics).
	BatchObserver pacing.BatchObserver
	// MaxRuns bounds the job runs in progress at once (default
	// DefaultMaxRuns).
	MaxRuns int
	// RunBound is the longest a job run may last (the worker's job
	// timeout); default 2 minutes. A run that finds an earlier run of a
	// request started less than this (plus the time a vendor-accepted
	// result may take to be recorded) ago leaves that request alone: the
	// queue re-runs jobs it thinks stuck.
	RunBound time.Duration
	// WebhookAllowPrivate (NOTIFYD_ALLOW_PRIVATE_TARGETS) turns the SSRF
	// guard of webhook tries off; WebhookTimeout bounds one try (default
	// DefaultWebhookTimeout).
	WebhookAllowPrivate bool
	WebhookTimeout      time.Duration
	// SoleWorker says no other worker process uses the database (SQLite
	// under the worker lock): a request left processing by another
	// process is an orphan and is taken over at once.
	SoleWorker bool
	// ShareClaims lets the claims of concurrent job runs share one
	// transaction (the store's group commit), for a backend with one writer
	// (SQLite), where every commit waits for it: under load the claims were
	// a commit per accepted batch. Not on PostgreSQL, whose several group
	// commits at once could then lock circuits in crossing orders.
	ShareClaims bool
	// UnkeyedPerAccount is how many unkeyed calls of one provider account
	// may be out and not yet noted across the process (unkeyed.go); 0:
	// 4. Each slot is busy for a vendor call and a note's commit, so the
	// bound caps one account at about UnkeyedPerAccount ÷ (vendor
	// latency + note commit): the daemon gives PostgreSQL, whose notes
	// take about 1 ms against SQLite's 0.2 ms, twice as many.
	UnkeyedPerAccount int
	// Tracer traces job runs, deliveries, vendor calls and webhook tries
	// (tracing.go); nil: tracing off.
	Tracer *tracing.Tracer
	// Receipts is when delivery receipts are polled and given up (zero
	// fields: the defaults); ReceiptMetrics counts those an early report
	// made final at once (nil counts nothing).
	Receipts       ReceiptPolicy
	ReceiptMetrics *metrics.Receipts
	// TestHTTP is the client of test requests' vendor calls (issue 36):
	// the daemon's in-process simulator behind an in-memory transport,
	// which dials nothing. Nil: test requests fail (temporary_unavailable)
	// rather than reach a vendor.
	TestHTTP *http.Client
	// Attempts counts provider attempts (live and test); nil counts
	// nothing.
	Attempts *metrics.Attempts
	// Tracker adds open and click tracking to outgoing e-mail HTML (the
	// engagement room; nil: none).
	Tracker Tracker
}

// Tracker is the engagement room's port: the HTML of r's message on
// channel ch as it leaves at sentAt, tracked when r's settings say so.
type Tracker interface {
	Instrument(ctx context.Context, r *notify.Request, ch notify.Channel, html string, sentAt time.Time) string
}

// Engine delivers requests. One lives in each worker process.
type Engine struct {
	store   notify.Store
	box     *secret.Box
	kinds   kinds.Registry
	deps    provider.Deps
	now     func() time.Time
	log     *slog.Logger
	backoff time.Duration
	breaker dispatch.BreakerPolicy
	// runLease is how long a started run may still be live.
	runLease    time.Duration
	soleWorker  bool
	shareClaims bool
	// runs holds a slot per job run in progress (RunJob); a job waits
	// runWait for one before it snoozes.
	runs chan struct{}
	// bulkRuns are the run slots of bulk work (jobs of the bulk queue,
	// notify.LaneOf): a campaign's runs never take a transactional run's.
	bulkRuns chan struct{}
	// bulkBytes is the bulk runs' budget of bytes held (budget.go).
	bulkBytes *byteBudget
	runWait   time.Duration
	// sends holds a slot per transactional send in flight, bulkSends per
	// bulk one: a campaign waiting on its dispatch limit never takes the
	// slots of password resets.
	bulkSends chan struct{}
	// sends holds a slot per send in flight.
	sends chan struct{}

	// active holds the ids of the job rows this process's runs hold now:
	// one of its own rows still processing but not here belongs to a run
	// that ended without recording (its database went away) and is taken
	// over at once (rescue.go).
	active sync.Map
	// paused holds the queue jobs whose last run left requests of a
	// paused campaign queued (run.go): their next run checks first.
	paused sync.Map

	mu      sync.Mutex
	clients map[string]provider.Provider // by account id and config version

	batches   *pacing.Batcher // adapter batching (batching.go)
	batchCfgs batchConfigs
	lim       *limits // dispatch limits (limits.go)

	quotas   *quotaCache    // provider balances (quota.go)
	webhooks *webhookPoster // webhook tries (webhookpost.go)
	tracer   *tracing.Tracer

	recorder *groupcommit.Queue[*recording] // outcome writes (recorder.go)
	notes    *notes                         // outcome notes (notes.go)

	takeovers      *metrics.Takeovers
	receipts       ReceiptPolicy
	receiptMetrics *metrics.Receipts

	// testDeps are the adapters' facilities for test requests (TestHTTP).
	testDeps provider.Deps
	attempts *metrics.Attempts
	tracker  Tracker

	unkeyedAccounts unkeyedSlots // unkeyed.go
}

// New builds an Engine.
func New(o Options) *Engine {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	e := &Engine{store: o.Store, box: o.Box, kinds: o.Kinds, deps: o.Deps, now: func() time.Time { return o.Now().UTC() },
		log: o.Logger, backoff: cmp.Or(o.Backoff, 3*time.Second), breaker: dispatch.DefaultBreakerPolicy(),
		clients: map[string]provider.Provider{}}
	e.runLease = cmp.Or(o.RunBound, 2*time.Minute) + recordGrace
	e.soleWorker = o.SoleWorker
	e.shareClaims = o.ShareClaims
	e.unkeyedAccounts.size = cmp.Or(o.UnkeyedPerAccount, unkeyedPerAccount)
	e.runs, e.runWait = make(chan struct{}, cmp.Or(o.MaxRuns, DefaultMaxRuns)), runSlotWait
	e.bulkRuns = make(chan struct{}, cmp.Or(o.MaxRuns, DefaultMaxRuns))
	e.bulkBytes = newByteBudget(bulkBudget)
	e.sends = make(chan struct{}, maxSends)
	e.bulkSends = make(chan struct{}, maxBulkSends)
	e.lim = newLimits(e.now, o.Metrics, o.MaxWaiters)
	e.lim.limiter.SetKeep(o.TransactionalShare)
	e.batches = pacing.NewBatcher(o.BatchObserver)
	e.batches.SetSharer(e.lim.cluster) // cluster-wide call budgets
	e.quotas = newQuotaCache()
	e.webhooks = newWebhookPoster(o.WebhookAllowPrivate, o.WebhookTimeout)
	e.tracer = o.Tracer
	e.recorder = e.newRecorder()
	e.notes = e.newNotes()
	e.takeovers = o.Takeovers
	e.receipts = ReceiptPolicy{FirstPoll: cmp.Or(o.Receipts.FirstPoll, DefaultReceiptFirstPoll),
		Deadline: cmp.Or(o.Receipts.Deadline, DefaultReceiptDeadline)}
	e.receiptMetrics = o.ReceiptMetrics
	e.testDeps, e.attempts = provider.Deps{HTTP: o.TestHTTP, Now: o.Deps.Now}, o.Attempts
	e.tracker = o.Tracker
	return e
}

// DefaultMaxRuns bounds a process's job runs in progress (up to 100
// requests each), and maxSends the sends in flight at once (a goroutine
// each). A run spends most of its time waiting for its transactions (on
// SQLite behind the sends' group commits), so runs are many; the bounds
// keep a large backlog (a campaign, a worker back from an outage) from
// claiming more requests than the process can send in its runs' time, or
// holding a goroutine per claimed message. maxSends stays above the
// largest adapter batch (500) times a few accounts.
const (
	DefaultMaxRuns = 256
	maxSends       = 4096
	maxBulkSends   = 4096
)

// runSlotWait is how long a job waits for a run slot before it snoozes
// (a wait in a worker slot must not run into the job's timeout).
const runSlotWait = 5 * time.Second

// recordGrace bounds the recording of a run's outcomes once its sends
// are done, even when the job's own context has ended: a message the
// vendor accepted must be recorded, or a retry would send it again.
const recordGrace = 30 * time.Second

func newID() string { return uuid.Must(uuid.NewV7()).String() }

// openConfig decrypts a provider account's configJson.
func (e *Engine) openConfig(p *notify.ProviderAccount) (provider.Config, error) {
	b, err := e.box.OpenFor(notify.SealedAAD(notify.SealedProviderConfig, p.ID), p.ConfigEnc)
	if err != nil {
		return nil, fmt.Errorf("open provider config: %w", err)
	}
	var cfg provider.Config
	if err := json.Unmarshal(b, &cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}

// configKey names one version of an account's configuration.
func configKey(p *notify.ProviderAccount) string {
	return p.ID + "@" + strconv.FormatInt(p.UpdatedAt.UnixNano(), 10)
}

// client returns the provider for an account, built once per config version
// (adapters cache vendor tokens).
func (e *Engine) client(p *notify.ProviderAccount) (provider.Provider, *provider.Error) {
	return e.clientWith(p, configKey(p), e.deps)
}

// clientWith returns the provider for an account built with deps, cached
// under key.
func (e *Engine) clientWith(p *notify.ProviderAccount, key string, deps provider.Deps) (provider.Provider, *provider.Error) {
	e.mu.Lock()
	c, ok := e.clients[key]
	e.mu.Unlock()
	if ok {
		return c, nil
	}
	k, ok := e.kinds[p.ProviderKind]
	if !ok {
		return nil, provider.Errorf(notify.FailureUnsupportedChannel, "unknown provider kind %s", p.ProviderKind)
	}
	cfg, err := e.openConfig(p)
	if err != nil {
		return nil, provider.Errorf(notify.FailureInvalidRequest, "provider configuration cannot be read")
	}
	c, err = k.New(cfg, deps)
	if err != nil {
		var pe *provider.Error
		if errors.As(err, &pe) {
			return nil, pe
		}
		return nil, provider.Errorf(notify.FailureInvalidRequest, "%v", err)
	}
	e.mu.Lock()
	e.clients[key] = c
	e.mu.Unlock()
	return c, nil
}
