package notifytest

import (
	"sync"
	"testing"
	"time"

	"github.com/notifyd/notifyd/internal/daemon"
)

// Clock is a test clock: real time shifted by an offset that only grows,
// so timers, River and HTTP timeouts keep working while a test jumps over
// an expiry or a cooldown. Pass Now to StartDaemonAt and to the API key
// client (client.Client.Now) so signatures stay within tolerance.
type Clock struct {
	mu  sync.Mutex
	off time.Duration
}

// Now is the shifted time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.off)
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.off += d
}

// AdvanceTo moves the clock forward so that Now is about at (never back).
func (c *Clock) AdvanceTo(at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d := time.Until(at) - c.off; d > 0 {
		c.off += d
	}
}

// StartPeer opens a second daemon (its own HTTP server, queue client and
// service) on the same database and configuration as e, like a second
// process of a multi-instance deployment. now is its clock (nil:
// time.Now). The database is already bootstrapped, so no owner is made.
// opts change the peer's configuration (for example WithRole).
func (e *Env) StartPeer(t testing.TB, now func() time.Time, opts ...Option) *daemon.Daemon {
	t.Helper()
	cfg := e.Daemon.Config
	cfg.Addr = "127.0.0.1:0"
	for _, o := range opts {
		o(&cfg)
	}
	return openDaemon(t, cfg, now, false)
}
