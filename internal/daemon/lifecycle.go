package daemon

import (
	"context"
	"errors"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/notifyd/notifyd/internal/server"
)

// errStopping makes /readyz answer 503 from the start of a graceful stop,
// before the listener closes, so a load balancer stops sending first.
var errStopping = errors.New("stopping")

// ready is the readiness check of both listeners: the database answers
// with a current schema, and the process is not stopping.
func (d *Daemon) ready(ctx context.Context) error {
	if d.stopping.Load() {
		return errStopping
	}
	return d.DB.Ping(ctx)
}

// lockWorkers takes the worker lock of a SQLite database: a file beside
// it, locked for as long as the process runs. Holding it, this process
// knows no other worker uses the database, so at start every job left
// running is an orphan of a dead process (delivery.Engine.RescueAll). A
// second worker process on the same file is not refused: it runs without
// the lock and relies on the heartbeat rescue, like PostgreSQL.
func (d *Daemon) lockWorkers() bool {
	if d.DB.Dialect != "sqlite" || d.Config.Role == "api" {
		return false
	}
	path := strings.TrimPrefix(strings.TrimPrefix(d.Config.DatabaseURL, "sqlite:"), "//")
	unlock, err := lockFile(filepath.Clean(path) + ".lock")
	if err != nil {
		d.Logger.Warn("another worker process holds the database's worker lock; jobs of a dead worker are rescued by heartbeat only", "err", err)
		return false
	}
	d.unlockWorkers = unlock
	return true
}

// listenHealth starts the probes-only listener (NOTIFYD_HEALTH_ADDR): a
// worker serves no API, and Compose and Kubernetes need something to ask.
// On a worker it also serves /metrics.
func (d *Daemon) listenHealth() error {
	if d.Config.HealthAddr == "" {
		return nil
	}
	ln, err := net.Listen("tcp", d.Config.HealthAddr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	server.Probes(mux, d.ready, d.Logger)
	if d.Config.Role == "worker" {
		// A worker has no other listener: its metrics (dispatch limits,
		// batches, retention) are scraped here.
		mux.Handle("GET /metrics", server.MetricsHandler(d.Metrics))
	}
	d.health = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	d.healthAddr = ln.Addr().String()
	go func() { _ = d.health.Serve(ln) }()
	d.Logger.Info("health listener", "addr", d.healthAddr)
	return nil
}

// HealthAddr is the address of the probes-only listener, if any.
func (d *Daemon) HealthAddr() string { return d.healthAddr }

// unkeyedPerAccount is the delivery engine's bound on one provider
// account's unkeyed calls not yet noted (delivery/unkeyed.go): 8 on
// PostgreSQL, whose outcome notes commit in about 1 ms, so that one chat
// webhook still delivers as fast as serve accepts; the engine's 4
// elsewhere (docs/DECISIONS.md "Duplicates after a crash").
func (d *Daemon) unkeyedPerAccount() int {
	if d.DB.Dialect == "postgres" {
		return 8
	}
	return 0
}
