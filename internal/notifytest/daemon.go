package notifytest

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/config"
	"github.com/notifyd/notifyd/internal/daemon"
	"github.com/notifyd/notifyd/internal/simulator"
)

// Env is a running daemon with a simulator and a logged-in owner.
type Env struct {
	Daemon    *daemon.Daemon
	Sim       *simulator.Simulator
	SimURL    string
	Owner     *client.Client // dashboard client of the workspace owner
	Workspace string
	Email     string
	Password  string
	// now is the service clock (nil: time.Now); API keys sign with it.
	now func() time.Time
}

// Option changes the daemon configuration before start.
type Option func(*config.Config)

// WithQueueJobAttempts sets SVC_QUEUE_JOB_ATTEMPTS (attempts per queued job).
func WithQueueJobAttempts(n int) Option {
	return func(c *config.Config) { c.QueueJobAttempts = n }
}

// WithJobRescueAfter sets NOTIFYD_JOB_RESCUE_AFTER; a job's run is bounded
// by two thirds of it.
func WithJobRescueAfter(d time.Duration) Option {
	return func(c *config.Config) { c.JobRescueAfter = d }
}

// WithDNSServer turns the subscriber MX check on against the DNS server at
// addr (host:port), e.g. a mailcheck/dnstest server. Without it the test
// daemon skips the check, so tests never depend on outside DNS.
func WithDNSServer(addr string) Option {
	return func(c *config.Config) { c.MXCheck, c.DNSServer = true, addr }
}

// WithRetention sets NOTIFYD_RETENTION and NOTIFYD_AUDIT_RETENTION (0
// keeps forever: the daemon's periodic purge does nothing).
func WithRetention(data, audit time.Duration) Option {
	return func(c *config.Config) { c.Retention, c.AuditRetention = data, audit }
}

// WithRole sets --role: all (default), api or worker. A worker serves no
// HTTP; use it for peers (Env.StartPeer).
func WithRole(role string) Option {
	return func(c *config.Config) { c.Role = role }
}

// StartDaemon runs the whole daemon on 127.0.0.1:0 against a fresh
// database of the suite's backend, with the provider simulator on an
// httptest server and private targets allowed (the simulator is loopback).
func StartDaemon(t testing.TB, opts ...Option) *Env {
	t.Helper()
	return StartDaemonAt(t, nil, opts...)
}

// StartDaemonAt is StartDaemon with the service clock now (nil: time.Now),
// for tests that must pass expiry or cooldown times (see Clock).
func StartDaemonAt(t testing.TB, now func() time.Time, opts ...Option) *Env {
	t.Helper()
	return startDaemon(t, now, false, opts...)
}

// StartDaemonQueueAt is StartDaemonAt whose clock is River's too
// (daemon.Daemon.QueueClock): a job scheduled for a time of now's runs
// when now reaches it, however far the test moves the clock.
func StartDaemonQueueAt(t testing.TB, now func() time.Time, opts ...Option) *Env {
	t.Helper()
	return startDaemon(t, now, true, opts...)
}

func startDaemon(t testing.TB, now func() time.Time, queueClock bool, opts ...Option) *Env {
	t.Helper()
	sim := simulator.New()
	simSrv := httptest.NewServer(sim)
	t.Cleanup(simSrv.Close)

	cfg := config.Default()
	cfg.DatabaseURL = DatabaseURL(t)
	cfg.Addr = "127.0.0.1:0"
	cfg.SecretKey = "0000000000000000000000000000000000000000000000000000000000000001"
	cfg.SQLiteSynchronous = "NORMAL"
	cfg.AllowPrivateTargets = true
	cfg.QueueBackoff = 50 * time.Millisecond
	cfg.MXCheck = false
	for _, o := range opts {
		o(&cfg)
	}
	d := openDaemon(t, cfg, now, queueClock)
	ctx := context.Background()
	res, err := d.Rooms.Accounts.Bootstrap(ctx, "Test", "owner@example.com", "correct horse battery")
	require.NoError(t, err)
	c := client.New(d.URL())
	c.Token = res.AccessToken
	return &Env{Daemon: d, Sim: sim, SimURL: simSrv.URL, Owner: c, Workspace: res.WorkspaceID,
		Email: res.Email, Password: res.Password, now: now}
}

// NewWorkspace bootstraps another workspace with its own owner and returns
// that owner's client.
func (e *Env) NewWorkspace(t testing.TB, name, email string) (*client.Client, string) {
	t.Helper()
	res, err := e.Daemon.Rooms.Accounts.Bootstrap(context.Background(), name, email, "correct horse battery")
	require.NoError(t, err)
	c := client.New(e.Daemon.URL())
	c.Token = res.AccessToken
	return c, res.WorkspaceID
}

// openDaemon opens a daemon of cfg with clock now, closed after the test.
func openDaemon(t testing.TB, cfg config.Config, now func() time.Time, queueClock bool) *daemon.Daemon {
	t.Helper()
	d := daemon.New(cfg, newTestLogger(t), nil)
	d.Now, d.QueueClock = now, queueClock
	require.NoError(t, d.Open(context.Background()))
	t.Cleanup(func() {
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = d.Close(cctx)
	})
	return d
}
