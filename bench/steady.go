package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

// The steady scenario is issue 15's sustained-load measurement: the real
// `notifyd serve` binary with its default role, signed sends from 4
// connections for 5 minutes while it delivers to a local chata_webhook
// sink. It shows whether acceptance holds up over time (last minute at
// least 0.9 of the first), that everything accepted is delivered exactly
// once, and (PostgreSQL) how many connections ever wait on a lock.
//
// With -db postgres it runs on its own PostgreSQL server, initdb'ed for
// the run with default settings (autovacuum on: the machine's shared
// server runs with autovacuum off, which hides the table bloat a steady
// load builds up); with NOTIFYD_BENCH_DATABASE_URL set it uses that
// server instead, in a fresh schema.

const (
	steadyConns    = 4
	steadyDuration = 5 * time.Minute
	// steadyDrain is how long the scenario waits after the load for the
	// accepted messages still on their way to the sink.
	steadyDrain = 2 * time.Minute
)

// flagSet reports whether the flag name was given on the command line.
func flagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) {
		if f.Name == name {
			set = true
		}
	})
	return set
}

// steady: a sustained load on the default `notifyd serve`.
func (b *bench) steady(ctx context.Context) error {
	if !flagSet("conns") {
		b.conns = steadyConns
	}
	if !flagSet("duration") {
		b.duration = steadyDuration
	}
	// Acceptance is reported per slice: a minute, or a quarter of a
	// shorter run so that first and last still differ.
	slice := min(time.Minute, b.duration/4)
	if slice <= 0 {
		return fmt.Errorf("-duration %s is too short", b.duration)
	}
	header("steady load on default notifyd serve, delivering to a local sink", b)
	var dbURL string
	switch b.db {
	case "postgres":
		if base := os.Getenv("NOTIFYD_BENCH_DATABASE_URL"); base != "" {
			u, err := b.databaseURL()
			if err != nil {
				return err
			}
			dbURL = u
			fmt.Printf("database: the given server NOTIFYD_BENCH_DATABASE_URL=%s (fresh schema), %s\n", redactURL(base), pgSettings(ctx, dbURL))
		} else {
			u, desc, err := b.ownPostgres(ctx)
			if err != nil {
				return fmt.Errorf("own PostgreSQL server: %w", err)
			}
			dbURL = u
			fmt.Printf("database: own server started for this run, %s, %s\n", desc, pgSettings(ctx, dbURL))
		}
	case "sqlite":
		u, err := b.databaseURL()
		if err != nil {
			return err
		}
		dbURL = u
		fmt.Printf("database: %s\n", dbURL)
	default:
		return fmt.Errorf("unknown -db %q", b.db)
	}
	sk, err := newSink()
	if err != nil {
		return err
	}
	defer sk.srv.Close()
	p, err := b.startServe(ctx, dbURL, "all", b.conns)
	if err != nil {
		return err
	}
	if err := route(ctx, p.owner, "chata_webhook", "chata_webhook", map[string]string{"chata_webhook_url": sk.url}); err != nil {
		return err
	}
	var lockWaits *lockSampler
	if b.db == "postgres" {
		lockWaits = startLockSampler(dbURL)
	}

	slices := int((b.duration + slice - 1) / slice)
	accepted := make([]atomic.Int64, slices+1) // +1: a request ending just after the deadline
	delivered := make([]int64, slices+1)       // unique arrivals at each slice's end
	var seq atomic.Int64
	cpu0, start := p.cpu(), time.Now()
	ticksDone := make(chan struct{})
	go func() {
		// Ends at start+duration, before run (whose clock starts later).
		defer close(ticksDone)
		for i := 0; i < slices; i++ {
			time.Sleep(time.Until(start.Add(min(time.Duration(i+1)*slice, b.duration))))
			delivered[i] = int64(sk.unique())
		}
	}()
	ours := run("notifyd: signed POST /v1/notifications (201)", b.conns, b.duration, func(ctx context.Context, _ int) error {
		if err := post(ctx, p.key, "POST", "/v1/notifications", chatBody(seq.Add(1)), http.StatusCreated); err != nil {
			return err
		}
		i := min(int(time.Since(start)/slice), slices)
		accepted[i].Add(1)
		return nil
	})
	<-ticksDone
	loadEnd := time.Now()
	fmt.Println(ours)
	if ours.fail > 0 {
		fmt.Printf("server log (tail):\n%s\n", p.logTail())
	}

	// Per slice: accepted/s and delivered/s within the load.
	fmt.Printf("%-12s %12s %12s\n", "slice", "accepted/s", "delivered/s")
	rates := make([]float64, slices)
	var prevDelivered int64
	for i := 0; i < slices; i++ {
		from, to := time.Duration(i)*slice, min(time.Duration(i+1)*slice, b.duration)
		n := accepted[i].Load()
		if i == slices-1 {
			n += accepted[slices].Load() // requests that ended after the deadline
		}
		secs := (to - from).Seconds()
		rates[i] = float64(n) / secs
		d := delivered[i] - prevDelivered
		prevDelivered = delivered[i]
		fmt.Printf("%-12s %12.0f %12.0f\n", sliceLabel(from, to, slice), rates[i], float64(d)/secs)
	}
	first, last := rates[0], rates[len(rates)-1]
	unit := "minute"
	if slice != time.Minute {
		unit = "slice (" + slice.String() + ")"
	}
	fmt.Printf("%-44s %9.0f/s  (target >= 300/s)\n", "accepted in the first "+unit, first)
	fmt.Printf("%-44s %9.0f/s\n", "accepted in the last "+unit, last)
	fmt.Printf("%-44s %9.2f  (target >= 0.9)\n", "ratio last / first", last/first)
	fmt.Printf("%-44s %9.0f/s  p50 %.2f ms  p99 %.2f ms\n", "accepted overall", ours.rate(),
		float64(ours.pct(0.50).Microseconds())/1000, float64(ours.pct(0.99).Microseconds())/1000)

	// Wait for every accepted message to reach the sink.
	deadline := loadEnd.Add(steadyDrain)
	for int64(sk.unique()) < ours.ok && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	drained := time.Since(loadEnd)
	cpu := p.cpu() - cpu0
	time.Sleep(2 * time.Second) // late duplicates
	got := int64(sk.unique())
	fmt.Printf("%-44s %9d  (the last %s after the load ended)\n", "delivered (unique texts at the sink)", got,
		max(0, time.Unix(0, sk.last.Load()).Sub(loadEnd)).Round(time.Millisecond))
	und := ours.ok - got
	note := "(target 0; waited up to " + steadyDrain.String() + ")"
	if got >= ours.ok {
		note = fmt.Sprintf("(target 0; all arrived %s after the load)", drained.Round(time.Millisecond))
	}
	if und < 0 {
		note += fmt.Sprintf(" (%d arrived whose send the client counted as failed)", -und)
		und = 0
	}
	fmt.Printf("%-44s %9d  %s\n", "undelivered (accepted, never arrived)", und, note)
	fmt.Printf("%-44s %9d\n", "duplicates (a text that arrived twice)", sk.dups.Load())
	fmt.Printf("%-44s %9.2f ms  (%.1f s CPU for %d messages)\n", "server CPU per accepted and delivered message",
		float64(cpu.Microseconds())/1000/float64(max(ours.ok, 1)), cpu.Seconds(), ours.ok)
	if lockWaits != nil {
		fmt.Printf("%-44s %9d  (target <= 2; %d samples every 100 ms)\n", "pg_stat_activity: most waiting on a lock", lockWaits.stop(), lockWaits.samples.Load())
	}
	return nil
}

// sliceLabel names a slice in minutes when slices are minutes, else in
// seconds.
func sliceLabel(from, to, slice time.Duration) string {
	if slice == time.Minute {
		return fmt.Sprintf("min %s-%s", strconv.FormatFloat(from.Minutes(), 'f', -1, 64), strconv.FormatFloat(to.Minutes(), 'f', -1, 64))
	}
	return fmt.Sprintf("%ss-%ss", strconv.FormatFloat(from.Seconds(), 'f', -1, 64), strconv.FormatFloat(to.Seconds(), 'f', -1, 64))
}

func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

// pgSettings describes the server behind dbURL: version and autovacuum.
func pgSettings(ctx context.Context, dbURL string) string {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return "(settings unreadable: " + err.Error() + ")"
	}
	defer conn.Close(ctx)
	var version, autovacuum, maxConns string
	_ = conn.QueryRow(ctx, `SELECT current_setting('server_version'), current_setting('autovacuum'), current_setting('max_connections')`).
		Scan(&version, &autovacuum, &maxConns)
	return fmt.Sprintf("PostgreSQL %s, autovacuum %s, max_connections %s", version, autovacuum, maxConns)
}

// ownPostgres initdb's a PostgreSQL cluster in a temp dir, starts it with
// default settings on a free port of 127.0.0.1 with trust auth, creates a
// database and returns its URL; cleanup stops the server and removes the
// dir. As root, the server binaries run as the postgres OS user (initdb
// refuses to run as root).
func (b *bench) ownPostgres(ctx context.Context) (string, string, error) {
	bin, err := pgBinDir()
	if err != nil {
		return "", "", err
	}
	dir, err := os.MkdirTemp("", "notifyd-bench-pg-*")
	if err != nil {
		return "", "", err
	}
	b.cleanups = append(b.cleanups, func() { os.RemoveAll(dir) })
	asPostgres := os.Geteuid() == 0
	if asPostgres {
		u, err := user.Lookup("postgres")
		if err != nil {
			return "", "", fmt.Errorf("running as root needs a postgres OS user: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			return "", "", err
		}
	}
	pgCmd := func(name string, args ...string) *exec.Cmd {
		path := filepath.Join(bin, name)
		var cmd *exec.Cmd
		if asPostgres {
			cmd = exec.Command("runuser", append([]string{"-u", "postgres", "--", path}, args...)...)
		} else {
			cmd = exec.Command(path, args...)
		}
		cmd.Dir = dir // the postgres user may not enter the bench's working dir
		return cmd
	}
	data, logFile := filepath.Join(dir, "data"), filepath.Join(dir, "server.log")
	initdb := pgCmd("initdb", "-D", data, "--auth=trust", "--username=postgres", "--encoding=UTF8", "--locale=C", "--no-sync")
	if out, err := initdb.CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("initdb: %w: %s", err, tail(string(out), 2000))
	}
	addr, err := freePort()
	if err != nil {
		return "", "", err
	}
	_, port, _ := net.SplitHostPort(addr)
	start := pgCmd("pg_ctl", "-D", data, "-l", logFile, "-w", "-t", "60",
		"-o", fmt.Sprintf("-p %s -c listen_addresses=127.0.0.1 -c unix_socket_directories=%s", port, dir), "start")
	if out, err := start.CombinedOutput(); err != nil {
		lg, _ := os.ReadFile(logFile)
		return "", "", fmt.Errorf("pg_ctl start: %w: %s %s", err, out, tail(string(lg), 2000))
	}
	b.cleanups = append(b.cleanups, func() {
		stop := pgCmd("pg_ctl", "-D", data, "-m", "fast", "-w", "-t", "60", "stop")
		if out, err := stop.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "bench: pg_ctl stop: %v: %s\n", err, out)
		}
	})
	admin := fmt.Sprintf("postgres://postgres@127.0.0.1:%s/postgres?sslmode=disable", port)
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return "", "", err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE bench"); err != nil {
		return "", "", err
	}
	desc := fmt.Sprintf("initdb at %s (binaries %s), 127.0.0.1:%s", data, bin, port)
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%s/bench?sslmode=disable", port), desc, nil
}

// pgBinDir finds the PostgreSQL server binaries: the newest
// /usr/lib/postgresql/*/bin with initdb, else initdb's dir on PATH.
func pgBinDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool {
		vi, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(dirs[i])), 64)
		vj, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(dirs[j])), 64)
		return vi > vj
	})
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", fmt.Errorf("no initdb found under /usr/lib/postgresql/*/bin or on PATH; set NOTIFYD_BENCH_DATABASE_URL to use a running server")
}
