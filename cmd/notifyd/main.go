// Command notifyd is the notification delivery service: serve, migrate,
// bootstrap, simulate, send and version.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/notifyd/notifyd/cmd/notifyd/demo"
	"github.com/notifyd/notifyd/internal/accounts"
	"github.com/notifyd/notifyd/internal/config"
	"github.com/notifyd/notifyd/internal/daemon"
	"github.com/notifyd/notifyd/internal/secret"
	"github.com/notifyd/notifyd/internal/server"
	"github.com/notifyd/notifyd/internal/simulator"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	if len(os.Args) > 1 && os.Args[1] == "serve" {
		tuneGC()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

const usage = `notifyd: multi-channel notification delivery service

Usage:
  notifyd serve [--role all|api|worker] [--no-migrate] [flags]   run the API server and workers
  notifyd migrate                                                 apply all migrations and exit
  notifyd bootstrap --workspace NAME --email EMAIL [--password PW] create a workspace and its owner
  notifyd simulate [--addr 127.0.0.1:9090]                        run the provider simulator
  notifyd send --channel CH --to ADDR --text T [--wait] [flags]   send one notification (NOTIFYD_API_KEY, NOTIFYD_HMAC_SECRET)
  notifyd backup FILE                                             copy the SQLite database while it serves (PostgreSQL: pg_dump)
  notifyd rekey                                                   re-seal stored secrets under NOTIFYD_SECRET_KEY (after a key change)
  notifyd healthcheck [URL]                                       GET the readiness endpoint; exit 0 when ready (container HEALTHCHECK)
  notifyd version                                                 print the version and commit

Run "notifyd serve --help" for the configuration flags and variables.
`

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "serve":
		err = serve(ctx, args[1:], stdout, stderr)
	case "migrate":
		err = migrate(ctx, args[1:], stderr)
	case "bootstrap":
		err = bootstrap(ctx, args[1:], stdout, stderr)
	case "simulate":
		err = simulate(ctx, args[1:], stderr)
	case "send":
		err = send(ctx, args[1:], stdout, stderr)
	case "backup":
		err = backup(ctx, args[1:], stdout, stderr)
	case "rekey":
		err = rekey(ctx, args[1:], stderr)
	case "healthcheck":
		err = healthcheck(ctx, args[1:], stdout, stderr)
	case "version", "--version":
		fmt.Fprintln(stdout, versionString())
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
	default:
		fmt.Fprintf(stderr, "notifyd: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "notifyd:", err)
		return 1
	}
	return 0
}

// loadConfig reads the serve configuration; other commands share it so
// they find the same database.
func loadConfig(args []string, stderr io.Writer) (config.Config, error) {
	cfg, rest, err := config.Load(args, nil, nil)
	if errors.Is(err, flag.ErrHelp) {
		config.PrintUsage(stderr)
		return cfg, err
	}
	if err != nil {
		return cfg, err
	}
	if len(rest) > 0 {
		return cfg, fmt.Errorf("unexpected arguments: %s", strings.Join(rest, " "))
	}
	return cfg, nil
}

func newLogger(cfg config.Config, w io.Writer) *slog.Logger {
	return slog.New(newLogHandler(cfg, w))
}

func newLogHandler(cfg config.Config, w io.Writer) slog.Handler {
	var lvl slog.Level
	_ = lvl.UnmarshalText([]byte(cfg.LogLevel))
	opts := &slog.HandlerOptions{Level: lvl}
	if cfg.LogFormat == "json" {
		return slog.NewJSONHandler(w, opts)
	}
	return slog.NewTextHandler(w, opts)
}

// serveLogger is serve's logger. On a file (the process's own stderr)
// the lines are written behind the requests by a server.LogWriter,
// warnings and errors before their call returns; the returned function
// writes the rest.
func serveLogger(cfg config.Config, w io.Writer) (*slog.Logger, func()) {
	f, ok := w.(*os.File)
	if !ok {
		return newLogger(cfg, w), func() {}
	}
	lw := server.NewLogWriter(f)
	return slog.New(lw.Handler(newLogHandler(cfg, lw))), func() { _ = lw.Close() }
}

func serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := loadConfig(args, stderr)
	if err != nil {
		return err
	}
	logger, closeLog := serveLogger(cfg, stderr)
	defer closeLog()
	logger.Debug("configuration", "config", cfg.Redacted())
	if path := os.Getenv("NOTIFYD_CPU_PROFILE"); path != "" {
		// A CPU profile of the whole run, for benchmarks (docs/BENCHMARKS.md).
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer f.Close()
		defer pprof.StopCPUProfile()
	}
	d := daemon.New(cfg, logger, stdout)
	d.Version = version
	if cfg.Demo {
		demo.Attach(d)
	}
	if err := d.Open(ctx); err != nil {
		_ = d.Close(context.Background())
		return err
	}
	if cfg.Role == "worker" {
		<-ctx.Done()
	} else {
		select {
		case <-ctx.Done():
		case err := <-d.Done():
			if err != nil {
				_ = d.Close(context.Background())
				return err
			}
		}
	}
	logger.Info("shutting down", "timeout", cfg.ShutdownTimeout)
	sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	return d.Close(sctx)
}

func migrate(ctx context.Context, args []string, stderr io.Writer) error {
	return withStore(ctx, args, stderr, func(*daemon.Daemon, *secret.Box) error {
		fmt.Fprintln(stderr, "notifyd: migrations applied")
		return nil
	})
}

func bootstrap(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bootstrap", flag.ContinueOnError)
	fs.SetOutput(stderr)
	ws := fs.String("workspace", "", "workspace name (required)")
	email := fs.String("email", "", "owner email (required)")
	pw := fs.String("password", "", "owner password (generated when empty)")
	// The database flags of serve are accepted here too.
	var serveArgs []string
	var own []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		name := strings.TrimLeft(strings.SplitN(a, "=", 2)[0], "-")
		if name == "workspace" || name == "email" || name == "password" {
			own = append(own, a)
			if !strings.Contains(a, "=") && i+1 < len(args) {
				own = append(own, args[i+1])
				i++
			}
			continue
		}
		serveArgs = append(serveArgs, a)
	}
	if err := fs.Parse(own); err != nil {
		return err
	}
	if *ws == "" || *email == "" {
		return errors.New("bootstrap needs --workspace and --email")
	}
	cfg, err := loadConfig(serveArgs, stderr)
	if err != nil {
		return err
	}
	d := daemon.New(cfg, newLogger(cfg, stderr), nil)
	defer d.Close(context.Background())
	box, err := d.OpenStore(ctx, true)
	if err != nil {
		return err
	}
	res, err := accounts.New(accounts.Options{Store: d.DB, Box: box}).Bootstrap(ctx, *ws, *email, *pw)
	if errors.Is(err, accounts.ErrEmailTaken) {
		return fmt.Errorf("a user with email %s already exists", strings.ToLower(strings.TrimSpace(*email)))
	}
	if err != nil {
		return err
	}
	return json.NewEncoder(stdout).Encode(res)
}

func simulate(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("simulate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:9090", "listen address")
	if err := fs.Parse(args); err != nil {
		return err
	}
	srv := &http.Server{Addr: *addr, Handler: simulator.New(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	fmt.Fprintf(stderr, "notifyd: provider simulator listening on http://%s\n", *addr)
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
