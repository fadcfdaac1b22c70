// Package daemon is the composition root: it opens the store named by the
// configuration, creates the River client (insert-only for --role api),
// the service, the API and the HTTP server, and closes them in order. The
// command and the end-to-end tests share it.
package daemon

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/riverqueue/river"

	"github.com/notifyd/notifyd/internal/accounts"
	"github.com/notifyd/notifyd/internal/api"
	"github.com/notifyd/notifyd/internal/bounce"
	"github.com/notifyd/notifyd/internal/bounce/snshttp"
	"github.com/notifyd/notifyd/internal/categories"
	"github.com/notifyd/notifyd/internal/config"
	"github.com/notifyd/notifyd/internal/delivery"
	"github.com/notifyd/notifyd/internal/engagement"
	"github.com/notifyd/notifyd/internal/gate"
	"github.com/notifyd/notifyd/internal/identities"
	"github.com/notifyd/notifyd/internal/inboundhooks"
	"github.com/notifyd/notifyd/internal/inbox"
	"github.com/notifyd/notifyd/internal/jobs"
	"github.com/notifyd/notifyd/internal/limits"
	"github.com/notifyd/notifyd/internal/mailcheck"
	"github.com/notifyd/notifyd/internal/metrics"
	"github.com/notifyd/notifyd/internal/newsletter"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider"
	"github.com/notifyd/notifyd/internal/provider/kinds"
	"github.com/notifyd/notifyd/internal/providers"
	"github.com/notifyd/notifyd/internal/receipts"
	"github.com/notifyd/notifyd/internal/recipients"
	"github.com/notifyd/notifyd/internal/retention"
	"github.com/notifyd/notifyd/internal/rooms"
	"github.com/notifyd/notifyd/internal/secret"
	"github.com/notifyd/notifyd/internal/sends"
	"github.com/notifyd/notifyd/internal/server"
	"github.com/notifyd/notifyd/internal/simulator"
	"github.com/notifyd/notifyd/internal/store"
	"github.com/notifyd/notifyd/internal/suppressions"
	"github.com/notifyd/notifyd/internal/templates"
	"github.com/notifyd/notifyd/internal/tracing"
	"github.com/notifyd/notifyd/internal/tracing/otlp"
	"github.com/notifyd/notifyd/internal/verification"
	"github.com/notifyd/notifyd/internal/web"
	"github.com/notifyd/notifyd/internal/webhooks"
	"github.com/notifyd/notifyd/internal/windows"
	"github.com/notifyd/notifyd/internal/worker"
	"github.com/notifyd/notifyd/internal/workflows"
	"github.com/notifyd/notifyd/openapi"
)

// Daemon is one running notifyd process.
type Daemon struct {
	Config config.Config
	Logger *slog.Logger
	DB     *store.DB
	// Rooms are the use cases, one room each.
	Rooms rooms.Set
	// SNS verifies and confirms the SNS messages of SES callbacks over
	// HTTP, for the suppressions room (the demo trusts its simulator's
	// host).
	SNS *snshttp.Verifier
	// Gate is the signed API's door, shared by the API and the sends.
	Gate *gate.Gate
	// Delivery is the delivery engine the workers drive.
	Delivery *delivery.Engine
	// engagement is the tracking room, built before the engine (Open).
	engagement *engagement.Service
	Metrics    *metrics.Metrics
	// TestSimulator answers the vendor calls of test requests in memory
	// (testmode.go); tests read what it received.
	TestSimulator *simulator.Simulator
	// Stdout receives the first-start login notice.
	Stdout io.Writer
	// Now, when set before Open, is the service clock (tests move it to
	// reach expiry and cooldown ends without sleeping); nil means time.Now.
	Now func() time.Time
	// QueueClock, set with Now before Open, makes Now River's clock too, so
	// a job scheduled for a time of Now's becomes due when Now reaches it
	// (tests of send windows). Tests only: River stubs its time with it.
	QueueClock bool

	queue    store.Queue
	listener net.Listener
	http     *http.Server
	done     chan error
	// Addons run beside the daemon once it listens, and close after its
	// workers stopped: demo mode's simulator, attached by the command.
	Addons []Addon
	// metricsAddr is the NOTIFYD_METRICS_ADDR listener's address.
	metricsAddr string
	// stopRelay ends the webhook outbox relay (worker roles).
	stopRelay func()
	// stopHeartbeat ends the dispatch-limit heartbeat (worker roles).
	stopHeartbeat func()
	// stopping turns readiness off at the start of Close.
	stopping atomic.Bool
	// loginKey signs the console's login forms (derived from the master key).
	loginKey []byte
	// unlockWorkers releases the SQLite worker lock (lifecycle.go).
	unlockWorkers func()
	// tracker knows the queue jobs this process works (worker roles).
	tracker *worker.Tracker
	// health is the probes-only listener (NOTIFYD_HEALTH_ADDR).
	health     *http.Server
	healthAddr string
	// Version is the build's version, the service.version of its spans.
	Version string
	// tracing exports spans when the OTEL_* variables ask for it (nil:
	// off); tracer is its Tracer, nil when off.
	tracing *otlp.Provider
	tracer  *tracing.Tracer
}

// New builds a daemon from cfg without starting anything that listens or
// works; Open does.
func New(cfg config.Config, logger *slog.Logger, stdout io.Writer) *Daemon {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if stdout == nil {
		stdout = io.Discard
	}
	return &Daemon{Config: cfg, Logger: logger, Stdout: stdout, Metrics: metrics.New()}
}

// OpenStore opens the database, migrates it (unless NoMigrate, which
// instead refuses a stale schema) and loads the secret key, refusing a
// database whose secrets were sealed with a key it was not given (keys.go).
func (d *Daemon) OpenStore(ctx context.Context, migrate bool) (*secret.Box, error) {
	db, err := store.Open(ctx, d.Config.DatabaseURL, store.Options{SQLiteSynchronous: d.Config.SQLiteSynchronous})
	if err != nil {
		return nil, err
	}
	d.DB = db
	if migrate {
		if err := db.Migrate(ctx); err != nil {
			return nil, fmt.Errorf("migrate: %w", err)
		}
	} else if err := db.Ping(ctx); err != nil {
		return nil, err
	}
	created := d.keyFileMissing()
	key, err := d.secretKey()
	if err != nil {
		return nil, err
	}
	return d.openBox(ctx, key, created)
}

// secretKey parses NOTIFYD_SECRET_KEY, or with SQLite loads (creating on
// first start) a key file beside the database file.
func (d *Daemon) secretKey() ([]byte, error) {
	if d.Config.SecretKey != "" {
		return secret.ParseKey(d.Config.SecretKey)
	}
	if d.DB.Dialect != "sqlite" {
		return nil, errors.New("NOTIFYD_SECRET_KEY is required with PostgreSQL")
	}
	path := strings.TrimPrefix(strings.TrimPrefix(d.Config.DatabaseURL, "sqlite:"), "//")
	return secret.LoadOrCreateKeyFile(filepath.Join(filepath.Dir(path), "notifyd.key"))
}

// mailChecker is the DNS check of new subscribers' domains (NOTIFYD_MX_CHECK,
// NOTIFYD_DNS_SERVER); nil when turned off.
func (d *Daemon) mailChecker() *mailcheck.Checker {
	if !d.Config.MXCheck {
		return nil
	}
	return mailcheck.New(d.Config.DNSServer, 5*time.Second)
}

// Open starts the daemon: store, queue, service and (unless the role is
// worker) the HTTP server on Config.Addr.
func (d *Daemon) Open(ctx context.Context) error {
	box, err := d.OpenStore(ctx, !d.Config.NoMigrate)
	if err != nil {
		return err
	}
	master, err := d.secretKey()
	if err != nil {
		return err
	}
	d.loginKey = secret.Derive(master, web.LoginKeyLabel)
	otpSecret := []byte(d.Config.OTPSigningSecret)
	if len(otpSecret) == 0 {
		otpSecret = secret.Derive(master, verification.SigningLabel)
	}
	if d.Config.Role != "worker" {
		if err := d.bind(); err != nil {
			return err
		}
	}
	if err := d.startTracing(ctx); err != nil {
		return err
	}
	allowPrivate := d.Config.AllowPrivateTargets || d.Config.Demo
	providerDeps := provider.Deps{HTTP: provider.NewHTTPClient(provider.HTTPOptions{AllowPrivate: allowPrivate}), Now: time.Now}
	var testHTTP *http.Client
	d.TestSimulator, testHTTP = newTestSimulator()
	// The engagement room is built first: the engine hands it each
	// outgoing e-mail (open and click tracking, issue 35).
	d.engagement = engagement.New(engagement.Options{Store: d.DB, Now: d.Now, Logger: d.Logger,
		Key: secret.Derive(master, engagement.SigningLabel), BaseURL: d.Config.BaseURL, Off: d.Config.TrackingOff})
	d.Delivery = delivery.New(delivery.Options{Store: d.DB, Box: box, Kinds: kinds.All(), Deps: providerDeps, Now: d.Now, Logger: d.Logger,
		Backoff: d.Config.QueueBackoff, Metrics: d.Metrics.Limits, Takeovers: d.Metrics.Takeovers, MaxWaiters: dispatchMaxWorkers / 2, TransactionalShare: float64(d.Config.TransactionalShare) / 100, RunBound: d.dispatchJobTimeout(),
		BatchObserver: d.Metrics.Batch, WebhookAllowPrivate: allowPrivate, WebhookTimeout: d.Config.WebhookTimeout,
		SoleWorker: d.lockWorkers(), ShareClaims: d.DB.Dialect == "sqlite", UnkeyedPerAccount: d.unkeyedPerAccount(), Tracer: d.tracer,
		Receipts:       delivery.ReceiptPolicy{FirstPoll: d.receiptFirstPoll(), Deadline: d.Config.ReceiptDeadline},
		ReceiptMetrics: d.Metrics.Receipts, TestHTTP: testHTTP, Attempts: d.Metrics.ProviderAttempt, Tracker: d.engagement})
	d.Gate = gate.New(gate.Options{Store: d.DB, Box: box, Now: d.Now, Logger: d.Logger, Tolerance: d.Config.HMACTolerance})
	// SNS certificates and subscription URLs are fetched with the
	// SSRF-guarded client, from sns.<region>.amazonaws.com and the hosts
	// of NOTIFYD_SNS_CERT_HOSTS (plain http only where private targets
	// are allowed: tests, demo).
	d.SNS = &snshttp.Verifier{Client: providerDeps.HTTP,
		Policy: bounce.SNSPolicy{ExtraHosts: d.Config.SNSCertHosts, AllowHTTP: allowPrivate}}
	d.Rooms = d.buildRooms(box, master, otpSecret, allowPrivate)
	if err := d.startQueue(ctx); err != nil {
		return err
	}
	if err := d.listenHealth(); err != nil {
		return err
	}
	if d.Config.Role == "worker" {
		return nil
	}
	if err := d.firstStart(ctx); err != nil {
		return err
	}
	if err := d.listen(); err != nil {
		return err
	}
	for _, a := range d.Addons {
		if err := a.Start(ctx, d); err != nil {
			return err
		}
	}
	return nil
}

// startTracing turns tracing on when the standard OTEL_* variables ask
// for it (README "Tracing"); otherwise the tracer stays nil and nothing
// is traced. Variables it cannot honour (another exporter or protocol)
// are warned about and leave tracing off, as the OpenTelemetry
// specification asks: observability settings shared with other services
// must not stop notifications.
func (d *Daemon) startTracing(ctx context.Context) error {
	p, err := otlp.FromEnv(ctx, os.Getenv, cmp.Or(d.Version, "dev"))
	if err != nil {
		d.Logger.Warn("tracing stays off", "err", err)
		return nil
	}
	if p == nil {
		return nil
	}
	d.tracing, d.tracer = p, p.Tracer
	d.Logger.Info("tracing: exporting spans over OTLP")
	return nil
}

// Addon is something a command runs beside the daemon.
type Addon interface {
	Start(ctx context.Context, d *Daemon) error
	Close() error
}

// dispatchJobTimeout bounds a job run: two thirds of the rescue time, at
// most 2 minutes.
func (d *Daemon) dispatchJobTimeout() time.Duration {
	return min(worker.DefaultTimeout, cmp.Or(d.Config.JobRescueAfter, 3*time.Minute)*2/3)
}

// queueClock is River's time generator for Daemon.QueueClock.
type queueClock struct{ now func() time.Time }

func (c queueClock) Now() time.Time { return c.now() }

func (c queueClock) NowOrNil() *time.Time {
	t := c.now().UTC()
	return &t
}

func (d *Daemon) startQueue(ctx context.Context) error {
	cfg := &river.Config{Logger: d.Logger.With("component", "river")}
	if d.QueueClock && d.Now != nil {
		cfg.Test.Time = queueClock{d.Now}
	}
	if d.Config.Role != "api" {
		d.configureWorkers(cfg)
	}
	q, err := d.DB.NewQueue(cfg)
	if err != nil {
		return err
	}
	d.queue = q
	if d.Config.Role != "api" {
		if d.unlockWorkers != nil { // the only worker: every running job is an orphan
			if _, err := d.Delivery.RescueAll(ctx); err != nil {
				return err
			}
		}
		// Alive before the first fetch, so no other worker takes this
		// one's jobs for a dead process's.
		d.stopHeartbeat = worker.StartHeartbeat(d.Delivery, d.tracker, d.Logger, delivery.HeartbeatInterval, delivery.RescueInterval, delivery.DeadAfter)
		// Not ctx: cancelling Start's context is River's hard stop, which
		// abandons running jobs; Close stops the queue gracefully.
		if err := q.Start(context.WithoutCancel(ctx)); err != nil {
			return err
		}
		d.stopRelay = worker.StartWebhookRelay(d.Rooms.Webhooks, d.Logger, 0)
	}
	return nil
}

// configureWorkers gives the queue of a worker process its workers,
// queues, periodic jobs, fetch and rescue settings and middleware.
func (d *Daemon) configureWorkers(cfg *river.Config) {
	workers := river.NewWorkers()
	river.AddWorker(workers, &worker.Cleanup{Sessions: d.Rooms.Accounts, OTP: d.Rooms.Verification, Logger: d.Logger})
	river.AddWorker(workers, &worker.Retention{Service: d.Rooms.Retention, Metrics: d.Metrics.Retention, Logger: d.Logger,
		Policy: notify.Retention{Data: d.Config.Retention, Audit: d.Config.AuditRetention}})
	// A job left running by a crashed process is handed back after
	// NOTIFYD_JOB_RESCUE_AFTER; River requires the job timeout below it,
	// so runs are bounded by two thirds of it, at most 2 minutes.
	rescueAfter := cmp.Or(d.Config.JobRescueAfter, 3*time.Minute)
	jobTimeout := d.dispatchJobTimeout()
	river.AddWorker(workers, &worker.Dispatch{Engine: d.Delivery, Backoff: d.Config.QueueBackoff, JobTimeout: jobTimeout})
	river.AddWorker(workers, &worker.DispatchBatch{Engine: d.Delivery, Backoff: d.Config.QueueBackoff, JobTimeout: jobTimeout})
	river.AddWorker(workers, &worker.WebhookDelivery{Service: d.Rooms.Webhooks, TryTimeout: cmp.Or(d.Config.WebhookTimeout, 10*time.Second), MaxTimeout: jobTimeout})
	river.AddWorker(workers, &worker.Fanout{Service: d.Rooms.Newsletter, Backoff: d.Config.QueueBackoff, JobTimeout: jobTimeout})
	river.AddWorker(workers, &worker.ReceiptPoll{Service: d.Rooms.Receipts})
	river.AddWorker(workers, &worker.WorkflowStep{Service: d.Rooms.Workflows, Backoff: d.Config.QueueBackoff})
	river.AddWorker(workers, &worker.WorkflowSteps{Service: d.Rooms.Workflows, Backoff: d.Config.QueueBackoff})
	cfg.Workers = workers
	cfg.Queues = map[string]river.QueueConfig{
		jobs.QueueDefault: {MaxWorkers: dispatchMaxWorkers},
		// The other queues are mostly idle, and every poll of an idle
		// queue is a fetch statement (on SQLite, which has no insert
		// notifications, re-planned each time): they poll less often,
		// at the cost of up to 200 ms before a webhook or fan-out job
		// starts there.
		jobs.QueueMaintenance: {MaxWorkers: 2, FetchPollInterval: idlePollInterval},
		jobs.QueueWebhooks:    {MaxWorkers: 20, FetchPollInterval: idlePollInterval},
		jobs.QueueCampaign:    {MaxWorkers: 2, FetchPollInterval: idlePollInterval},
		// Delivery-report lookups wait on vendors; a few at a time.
		jobs.QueueReceipts: {MaxWorkers: 10, FetchPollInterval: idlePollInterval},
		// Workflow steps decide and write rows; a send step waits for
		// its acceptance's group commit.
		jobs.QueueWorkflows: {MaxWorkers: 50, FetchPollInterval: 50 * time.Millisecond},
		// Bulk work (campaign deliveries) has slots of its own, so a
		// campaign's backlog never delays a transactional send's start;
		// a job held by a dispatch limit waits in the queue, not in a
		// slot (delivery.admitBulk).
		// It polls as often as the default queue: a campaign's jobs
		// arrive as its fan-out writes them, and a slower poll left
		// workers idle between them.
		jobs.QueueBulk: {MaxWorkers: bulkMaxWorkers},
		// Jobs handed back twice after their process died run one at
		// a time (jobs/crash.go): a third crash is then theirs.
		jobs.QueueIsolated: {MaxWorkers: 1, FetchPollInterval: idlePollInterval},
	}
	cfg.PeriodicJobs = []*river.PeriodicJob{
		river.NewPeriodicJob(river.PeriodicInterval(5*time.Minute),
			func() (river.JobArgs, *river.InsertOpts) { return jobs.Cleanup{}, nil },
			&river.PeriodicJobOpts{RunOnStart: true}),
		river.NewPeriodicJob(river.PeriodicInterval(jobs.RetentionInterval),
			func() (river.JobArgs, *river.InsertOpts) { return jobs.Retention{}, nil },
			&river.PeriodicJobOpts{RunOnStart: true}),
	}
	// River's defaults poll every 100 ms for 100 jobs; tighter fetches
	// lift the work rate (PERFORMANCE.md).
	cfg.FetchCooldown = 5 * time.Millisecond
	cfg.FetchPollInterval = 50 * time.Millisecond
	cfg.RescueStuckJobsAfter = rescueAfter
	// A finished dispatch job's history lives in notification_jobs and
	// attempts; River's own completed row only carries a count. River
	// keeps them 24 h by default, a day of queue rows at thousands of
	// messages a second. Discarded and cancelled rows keep River's
	// defaults, for debugging.
	cfg.CompletedJobRetentionPeriod = completedJobRetention
	cfg.JobTimeout = min(river.JobTimeoutDefault, jobTimeout) // the cleanup job's bound
	// The queue's client id is the heartbeat's worker id: a running
	// job whose client has no fresh heartbeat belongs to a dead
	// process and is rescued within seconds (delivery/rescue.go).
	cfg.ID = d.Delivery.WorkerID()
	d.tracker = worker.NewTracker()
	cfg.Middleware = append(cfg.Middleware, d.tracker,
		&worker.CrashGuard{Engine: d.Delivery, Fanout: d.Rooms.Newsletter, Webhooks: d.Rooms.Webhooks,
			Workflows: d.Rooms.Workflows, Logger: d.Logger})
}

// dispatchMaxWorkers is the default queue's River MaxWorkers. Sends that
// wait on a dispatch limit hold a slot for at most 10 s (longer waits
// snooze the job) and half the slots at most (DispatchMaxWaiters), so
// limited workspaces cannot starve the others; an idle slot costs a
// goroutine and a fetched job row, about 10 KB (docs/notes/feat-dispatchlimits.md).
// A dispatch job also holds its slot while its message waits in an adapter
// batch, so the slots must exceed the largest default batch (500).
const dispatchMaxWorkers = 1000

// bulkMaxWorkers is the bulk queue's River MaxWorkers: each job carries up
// to 100 messages, and the engine gives bulk runs as many run slots of
// their own (delivery.DefaultMaxRuns), apart from the transactional ones.
// Fewer slots cost an unlimited campaign on SQLite 45% of its rate.
const bulkMaxWorkers = 256

// completedJobRetention is how long River keeps a completed queue job
// before its cleaner deletes it: the longest unique period of the
// periodic jobs, so a job is deleted only after its period has ended.
const completedJobRetention = jobs.RetentionInterval

// idlePollInterval is how often the queues other than dispatch look for
// work when nothing told them of any.
const idlePollInterval = 200 * time.Millisecond

// firstStart creates a workspace and owner on an empty database and prints
// the login once.
func (d *Daemon) firstStart(ctx context.Context) error {
	has, err := d.Rooms.Accounts.HasWorkspaces(ctx)
	if err != nil || has {
		return err
	}
	res, err := d.Rooms.Accounts.Bootstrap(ctx, "Default", "owner@notifyd.local", "")
	if errors.Is(err, accounts.ErrEmailTaken) {
		return nil // another node won the race
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(d.Stdout, "notifyd: first start, created workspace %s and its owner.\n  email:    %s\n  password: %s\n  (shown once; log in to the web console at %s/ or with POST /v1/auth/login)\n",
		res.WorkspaceID, res.Email, res.Password, d.Config.BaseURL)
	return nil
}

// bind takes the listening address before the service is built: a :0
// listener learns its port only then, and the links the service builds
// must use it.
func (d *Daemon) bind() error {
	ln, err := net.Listen("tcp", d.Config.Addr)
	if err != nil {
		return err
	}
	d.listener = ln
	if _, port, _ := net.SplitHostPort(d.Config.Addr); port == "0" {
		d.Config.BaseURL = "http://" + ln.Addr().String()
	}
	return nil
}

// buildRooms builds every use-case room on the store, the gate and the
// delivery engine (for the few engine entries a room uses).
func (d *Daemon) buildRooms(box *secret.Box, master, otpSecret []byte, allowPrivate bool) rooms.Set {
	db, now, log, eng := d.DB, d.Now, d.Logger, d.Delivery
	cats := categories.New(categories.Options{Store: db, Now: now, Logger: log,
		PageKey: secret.Derive(master, categories.PageSigningLabel), BaseURL: d.Config.BaseURL})
	snd := sends.New(sends.Options{Store: db, Now: now, Logger: log, JobAttempts: d.Config.QueueJobAttempts, Gate: d.Gate,
		PreferenceLink: cats.Link, Tracer: d.tracer})
	rcpt := receipts.New(receipts.Options{Store: db, Now: now, Logger: log, Reporters: eng,
		Schedule: d.receiptSchedule(), FallbackWindow: d.Config.ReceiptFallbackWindow, Metrics: d.Metrics.Receipts,
		Commit: reportCommitter(db.Dialect, snd), ReportShare: map[string]float64{"postgres": receipts.PostgresReportShare}[db.Dialect]})
	return rooms.Set{
		Accounts: accounts.New(accounts.Options{Store: db, Box: box, Now: now, Logger: log, Keys: d.Gate}),
		// Sending-domain DNS checks are asked for explicitly, so they use
		// the resolver whether or not subscriber MX checks are on.
		Identities: identities.New(identities.Options{Store: db, Box: box, Now: now, Logger: log, Engine: eng,
			DNS: mailcheck.New(d.Config.DNSServer, 5*time.Second)}),
		Limits: limits.New(limits.Options{Store: db, Now: now, Logger: log, Engine: eng}),
		Newsletter: newsletter.New(newsletter.Options{Store: db, Now: now, Logger: log,
			JobAttempts: d.Config.QueueJobAttempts, OptInKey: secret.Derive(master, newsletter.OptInSigningLabel),
			BaseURL: d.Config.BaseURL, MailCheck: d.mailChecker(),
			// PostgreSQL writes two fan-out batches at once; SQLite's one
			// writer would only queue the second.
			FanoutWriters: map[string]int{"postgres": 2}[db.Dialect]}),
		Providers:    providers.New(providers.Options{Store: db, Box: box, Now: now, Logger: log, Engine: eng}),
		Categories:   cats,
		Windows:      windows.New(windows.Options{Store: db, Now: now, Logger: log}),
		Recipients:   recipients.New(recipients.Options{Store: db, Now: now, Logger: log}),
		Retention:    retention.New(retention.Options{Store: db, Now: now, Logger: log}),
		Inbox:        inbox.New(inbox.Options{Store: db, Now: now, Logger: log, Box: box}),
		Sends:        snd,
		Receipts:     rcpt,
		Engagement:   d.engagement,
		InboundHooks: inboundhooks.New(inboundhooks.Options{Store: db, Now: now, Logger: log, Accept: hookAcceptor{snd}, Gate: d.Gate}),
		Suppressions: suppressions.New(suppressions.Options{Store: db, Box: box, Now: now, Logger: log, SNS: d.SNS, Receipts: rcpt}),
		Templates:    templates.New(templates.Options{Store: db, Now: now, Logger: log}),
		Verification: verification.New(verification.Options{Store: db, Now: now, Logger: log, Secret: otpSecret,
			CodeKey: secret.Derive(master, verification.CodeLabel), BaseURL: d.Config.BaseURL, Engine: eng}),
		Workflows: workflows.New(workflows.Options{Store: db, Now: now, Logger: log, Accept: workflowAcceptor{snd}}),
		Webhooks: webhooks.New(webhooks.Options{Store: db, Box: box, Now: now, Logger: log, Poster: eng,
			AllowPrivate: allowPrivate, Schedule: d.Config.WebhookRetrySchedule, SecretOverlap: d.Config.WebhookSecretOverlap,
			Metrics: d.Metrics.Webhooks}),
	}
}

// receiptFirstPoll is the wait before a receipt's first lookup: the first
// of NOTIFYD_RECEIPT_POLL_SCHEDULE (zero: the engine's default).
func (d *Daemon) receiptFirstPoll() time.Duration {
	if len(d.Config.ReceiptPollSchedule) == 0 {
		return 0
	}
	return d.Config.ReceiptPollSchedule[0]
}

// receiptSchedule is the waits before the further lookups (nil: the
// room's default).
func (d *Daemon) receiptSchedule() []time.Duration {
	if len(d.Config.ReceiptPollSchedule) < 2 {
		return nil
	}
	return d.Config.ReceiptPollSchedule[1:]
}

// APIOptions are the options the daemon builds its API with: the rooms,
// the gate and the settings (tests build an API of their own from them).
func (d *Daemon) APIOptions() api.Options {
	return api.Options{Rooms: d.Rooms, Gate: d.Gate, BaseURL: d.Config.BaseURL, Logger: d.Logger, LimitMetrics: d.Metrics.Limits,
		TrustedProxies: d.Config.TrustedProxies}
}

// ConsoleOptions are the options the daemon builds its console with; its
// ClientAddr is the API's (trusted proxies).
func (d *Daemon) ConsoleOptions(clientAddr func(*http.Request) string) web.Options {
	return web.Options{Rooms: d.Rooms, BaseURL: d.Config.BaseURL, Logger: d.Logger, ClientAddr: clientAddr, LoginKey: d.loginKey}
}

// listen serves HTTP on the listener bind took.
func (d *Daemon) listen() error {
	ln := d.listener
	a := api.New(d.APIOptions())
	console := web.New(d.ConsoleOptions(a.ClientAddr))
	h := server.Handler(server.Options{API: a, Metrics: d.Metrics, Logger: d.Logger, Ready: d.ready, OpenAPI: openapi.OpenAPI,
		Extra: server.Merge(console.Handlers(), a.PublicHandlers()), NoMetrics: d.Config.MetricsAddr != "", Tracer: d.tracer})
	d.http = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 60 * time.Second,
		WriteTimeout: 60 * time.Second, IdleTimeout: 120 * time.Second, ErrorLog: slog.NewLogLogger(d.Logger.Handler(), slog.LevelWarn)}
	if err := d.listenMetrics(); err != nil {
		_ = ln.Close()
		return err
	}
	// The inbox streams of this process are woken by the store's feed
	// (issue 33: LISTEN on PostgreSQL, in process on SQLite) and end
	// when the server stops, so Shutdown does not wait for them.
	d.Metrics.InboxStreams(d.Rooms.Inbox.Streams)
	feed, stopFeed := context.WithCancel(context.Background())
	go func() { _ = d.DB.ListenInbox(feed, d.Rooms.Inbox.Wake) }()
	d.http.RegisterOnShutdown(func() {
		d.Rooms.Inbox.Close()
		stopFeed()
	})
	warnPlainBaseURL(d.Logger, d.Config.BaseURL, ln.Addr())
	d.done = make(chan error, 1)
	go func() {
		err := d.http.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		d.done <- err
	}()
	d.Logger.Info("listening", "addr", ln.Addr().String(), "base_url", d.Config.BaseURL, "role", d.Config.Role)
	return nil
}

// listenMetrics serves /metrics alone on NOTIFYD_METRICS_ADDR, when set;
// it stops with the main server (Shutdown runs the hook).
func (d *Daemon) listenMetrics() error {
	if d.Config.MetricsAddr == "" {
		return nil
	}
	ln, err := net.Listen("tcp", d.Config.MetricsAddr)
	if err != nil {
		return fmt.Errorf("metrics listener: %w", err)
	}
	d.metricsAddr = ln.Addr().String()
	srv := &http.Server{Handler: server.MetricsHandler(d.Metrics), ReadHeaderTimeout: 10 * time.Second,
		WriteTimeout: 60 * time.Second, ErrorLog: slog.NewLogLogger(d.Logger.Handler(), slog.LevelWarn)}
	d.http.RegisterOnShutdown(func() { _ = srv.Close() })
	go func() { _ = srv.Serve(ln) }()
	d.Logger.Info("serving metrics", "addr", d.metricsAddr)
	return nil
}

// warnPlainBaseURL warns when links go out as http:// from a listener
// others can reach: RFC 8058 one-click unsubscribe URLs must be https,
// and OTP link tokens would cross the network in clear.
func warnPlainBaseURL(log *slog.Logger, baseURL string, addr net.Addr) {
	if !strings.HasPrefix(strings.ToLower(baseURL), "http://") {
		return
	}
	if ta, ok := addr.(*net.TCPAddr); ok && ta.IP.IsLoopback() {
		return
	}
	log.Warn("NOTIFYD_BASE_URL is not https but the listener is reachable from other hosts: one-click unsubscribe links (RFC 8058) require https, and OTP link tokens travel in clear; set NOTIFYD_BASE_URL to the https URL of the TLS proxy in front",
		"base_url", baseURL, "addr", addr.String())
}

// MetricsAddr is the address of the /metrics listener, empty without one.
func (d *Daemon) MetricsAddr() string { return d.metricsAddr }

// Addr is the address the server listens on.
func (d *Daemon) Addr() string {
	if d.listener == nil {
		return ""
	}
	return d.listener.Addr().String()
}

// URL is the base URL of the running server.
func (d *Daemon) URL() string { return "http://" + d.Addr() }

// Done reports the HTTP server's end.
func (d *Daemon) Done() <-chan error { return d.done }

// Close stops gracefully within ctx: readiness goes false, the listener
// stops taking requests and lets those in flight finish, the queue stops
// fetching and lets running jobs finish (their vendor calls and the
// recording of their outcomes); when ctx ends first, running jobs are
// cancelled, and a run still records what its vendor calls answered.
// Only then does the worker leave the heartbeat table (leaving earlier
// would make its running jobs look orphaned) and the store close.
func (d *Daemon) Close(ctx context.Context) error {
	d.stopping.Store(true)
	var errs []error
	if d.http != nil {
		errs = append(errs, d.http.Shutdown(ctx))
	} else if d.listener != nil {
		errs = append(errs, d.listener.Close()) // bound, but Open failed before serving
	}
	if d.queue != nil && d.Config.Role != "api" {
		if err := d.queue.Stop(ctx); err != nil {
			errs = append(errs, d.queue.StopAndCancel(context.WithoutCancel(ctx)))
		}
	}
	if d.engagement != nil {
		d.engagement.Close() // the clicks and opens still queued
	}
	if d.stopRelay != nil {
		d.stopRelay()
	}
	if d.stopHeartbeat != nil {
		d.stopHeartbeat()
	}
	if d.health != nil {
		errs = append(errs, d.health.Close())
	}
	for _, a := range d.Addons {
		errs = append(errs, a.Close())
	}
	// The last spans (the queue's final runs) are flushed before the
	// process ends, within what is left of the stop's time; a collector
	// that cannot take them is logged, not a failed stop.
	if err := d.tracing.Shutdown(ctx); err != nil {
		d.Logger.Warn("tracing: spans not flushed", "err", err)
	}
	if d.DB != nil {
		errs = append(errs, d.DB.Close())
	}
	if d.unlockWorkers != nil {
		d.unlockWorkers()
	}
	return errors.Join(errs...)
}
