package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/notifyd/notifyd/client"
)

// The serve scenario reproduces issue 15's measurement as a user sees it:
// the real `notifyd serve` binary with its default role (API and workers
// in one process), one workspace with request limits lifted by policy,
// one chata_webhook provider pointed at a local sink, signed sends from
// 64 connections for 10 s while delivery runs, then a wait until every
// accepted message reached the sink. The bare HTTP+HMAC handler runs
// under the same client in the same run.

// notifydProc is a notifyd serve process started by the benchmark.
type notifydProc struct {
	cmd   *exec.Cmd
	url   string
	owner *client.Client
	key   *client.Client
	dbURL string
	// logPath is the file notifyd's stderr goes to. The serve scenarios
	// run it at its default log level (info), one access-log line per
	// request written straight to the file, as under a service manager.
	logPath string
	// bin and env bootstrap another workspace (bootstrapAnother).
	bin string
	env []string
}

// bootstrapAnother bootstraps one more workspace in the running server's
// database and answers a dashboard client of its owner.
func (p *notifydProc) bootstrapAnother(ctx context.Context, name, email string) (*client.Client, error) {
	boot := exec.CommandContext(ctx, p.bin, "bootstrap", "--workspace", name, "--email", email, "--password", "bench password 1")
	boot.Env = p.env
	out, err := boot.Output()
	if err != nil {
		return nil, fmt.Errorf("bootstrap %s: %w", name, err)
	}
	var res struct {
		AccessToken string `json:"accessToken"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		return nil, fmt.Errorf("bootstrap output %q: %w", out, err)
	}
	c := client.New(p.url)
	c.HTTP = httpClient(8)
	c.Token = res.AccessToken
	return c, nil
}

// logTail is the end of what notifyd logged above level info (warnings,
// errors, and anything not written through the logger, such as a panic).
func (p *notifydProc) logTail() string {
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		return err.Error()
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(line) != "" && !strings.Contains(line, " level=INFO ") && !strings.Contains(line, " level=DEBUG ") {
			out = append(out, line)
		}
	}
	return tail(strings.Join(out, "\n"), 2000)
}

// buildNotifyd builds the binary once per run. NOTIFYD_BENCH_BINARY
// names a prebuilt one instead, to compare two builds run by run.
func (b *bench) buildNotifyd() (string, error) {
	if b.binary != "" {
		return b.binary, nil
	}
	if bin := os.Getenv("NOTIFYD_BENCH_BINARY"); bin != "" {
		b.binary = bin
		return bin, nil
	}
	dir, err := os.MkdirTemp("", "notifyd-bin-*")
	if err != nil {
		return "", err
	}
	b.cleanups = append(b.cleanups, func() { os.RemoveAll(dir) })
	bin := filepath.Join(dir, "notifyd")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/notifyd")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build notifyd: %w", err)
	}
	b.binary = bin
	return bin, nil
}

func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// startServe bootstraps a workspace on dbURL and starts `notifyd serve
// --role role` on it, with a signing client whose limits are lifted.
func (b *bench) startServe(ctx context.Context, dbURL, role string, conns int, env ...string) (*notifydProc, error) {
	bin, err := b.buildNotifyd()
	if err != nil {
		return nil, err
	}
	base := append(os.Environ(), "NOTIFYD_DATABASE_URL="+dbURL, "NOTIFYD_SECRET_KEY="+strings.Repeat("ab", 32),
		"NOTIFYD_ALLOW_PRIVATE_TARGETS=true", "NOTIFYD_MX_CHECK=false")
	base = append(base, env...)
	if b.serverProfile != "" {
		abs, _ := filepath.Abs(b.serverProfile)
		env = append(env, "NOTIFYD_CPU_PROFILE="+abs)
	}
	boot := exec.CommandContext(ctx, bin, "bootstrap", "--workspace", "bench", "--email", "bench@example.com", "--password", "bench password 1")
	boot.Env = base
	out, err := boot.Output()
	if err != nil {
		return nil, fmt.Errorf("bootstrap: %w", err)
	}
	var res struct {
		AccessToken string `json:"accessToken"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		return nil, fmt.Errorf("bootstrap output %q: %w", out, err)
	}
	p, err := b.spawn(bin, base, role, env...)
	if err != nil {
		return nil, err
	}
	p.dbURL = dbURL
	p.owner = client.New(p.url)
	p.owner.HTTP = httpClient(conns)
	p.owner.Token = res.AccessToken
	key, keyID, err := p.owner.CreateAPIKey(ctx, "bench", "notifications:send", "notifications:read")
	if err != nil {
		return nil, err
	}
	policy := map[string]any{"windowSeconds": 3600, "maxRequests": 1000000}
	for _, path := range []string{"/v1/limits/rate/workspace", "/v1/limits/rate/api-keys/" + keyID} {
		r, err := p.owner.Dashboard(ctx, "PUT", path, policy)
		if err != nil || r.Status != 200 {
			return nil, fmt.Errorf("rate policy %s: %v %s", path, err, r.Body)
		}
	}
	key.HTTP = httpClient(conns)
	p.key = key
	return p, nil
}

// spawn starts `notifyd serve --role role` with the environment base
// plus env on a free port and waits until it answers.
func (b *bench) spawn(bin string, base []string, role string, env ...string) (*notifydProc, error) {
	addr, err := freePort()
	if err != nil {
		return nil, err
	}
	logFile, err := os.CreateTemp("", "notifyd-bench-*.log")
	if err != nil {
		return nil, err
	}
	defer logFile.Close() // the child has its own descriptor
	p := &notifydProc{url: "http://" + addr, logPath: logFile.Name(), bin: bin, env: base}
	b.cleanups = append(b.cleanups, func() { _ = os.Remove(p.logPath) })
	p.cmd = exec.Command(bin, "serve", "--role", role)
	p.cmd.Env = append(append(base, env...), "NOTIFYD_ADDR="+addr)
	p.cmd.Stderr = logFile
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	b.cleanups = append(b.cleanups, func() {
		_ = p.cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = p.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = p.cmd.Process.Kill()
		}
	})
	for i := 0; ; i++ {
		r, err := http.Get(p.url + "/healthz")
		if err == nil {
			r.Body.Close()
			break
		}
		if i > 300 {
			return nil, fmt.Errorf("notifyd did not start: %s", p.logTail())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return p, nil
}

// another starts one more process of role on p's database (scale-out).
func (b *bench) another(p *notifydProc, role string, env ...string) (*notifydProc, error) {
	q, err := b.spawn(p.bin, p.env, role, env...)
	if err != nil {
		return nil, err
	}
	q.dbURL, q.owner, q.key = p.dbURL, p.owner, p.key
	return q, nil
}

// cpu is the process's user plus system CPU time so far.
func (p *notifydProc) cpu() time.Duration { return procCPU(p.cmd.Process.Pid) }

func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command name (which may hold spaces) in parentheses.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100 // USER_HZ
}

// sink is the local HTTP endpoint the chata_webhook provider posts to. It
// reads the body, answers 200 "ok" as Slack does, and counts arrivals per
// message (the benchmark's texts are unique, so a second arrival of one
// text is a duplicate delivery).
type sink struct {
	mu    sync.Mutex
	seen  map[string]int
	total atomic.Int64
	dups  atomic.Int64
	last  atomic.Int64 // unix nanos of the latest arrival
	srv   *http.Server
	url   string // a chata_webhook URL
	root  string // the base_url of a chata_bot account
}

func newSink() (*sink, error) {
	s := &sink{seen: map[string]int{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var m struct {
			Text string `json:"text"`
		}
		_ = json.Unmarshal(body, &m)
		id, _, _ := strings.Cut(m.Text, " ")
		s.mu.Lock()
		s.seen[id]++
		n := s.seen[id]
		s.mu.Unlock()
		if n > 1 {
			s.dups.Add(1)
		}
		s.total.Add(1)
		s.last.Store(time.Now().UnixNano())
		if strings.HasSuffix(r.URL.Path, "/chat.postMessage") { // chata_bot: Slack's Web API answer
			w.Header().Set("Content-Type", "application/json")
			_, _ = fmt.Fprintf(w, `{"ok":true,"channel":"C1","ts":"%d.000100"}`, s.total.Load())
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("ok"))
	})}
	go s.srv.Serve(ln)
	s.root = "http://" + ln.Addr().String()
	s.url = s.root + "/services/T000/B000/XXXX"
	return s, nil
}

func (s *sink) unique() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.seen)
}

// chatText is a unique ~300-byte text; its first word identifies it.
func chatText(i int64) string {
	head := fmt.Sprintf("m%09d ", i)
	return head + strings.Repeat("lorem ipsum dolor sit amet ", 11)[:300-len(head)]
}

func chatBody(i int64) []byte {
	b, _ := json.Marshal(map[string]any{
		"channel":   "chata_webhook",
		"recipient": map[string]any{"address": "bench"},
		"content":   map[string]any{"text": chatText(i)},
	})
	return b
}

// serveLoad: the default `notifyd serve` accepting while it delivers.
func (b *bench) serveLoad(ctx context.Context) error {
	header("default notifyd serve (role "+b.role+"): signed sends while delivering to a local sink", b)
	dbURL, err := b.databaseURL()
	if err != nil {
		return err
	}
	sk, err := newSink()
	if err != nil {
		return err
	}
	defer sk.srv.Close()
	p, err := b.startServe(ctx, dbURL, b.role, b.conns)
	if err != nil {
		return err
	}
	if b.role != "api" {
		if err := route(ctx, p.owner, "chata_webhook", "chata_webhook", map[string]string{"chata_webhook_url": sk.url}); err != nil {
			return err
		}
	}
	base := b.bareBaseline()
	fmt.Println(base)
	own, err := b.bareProcessBaseline(ctx)
	if err != nil {
		return err
	}
	fmt.Println(own)
	floor, err := b.durableProcessBaseline(ctx)
	if err != nil {
		return err
	}
	fmt.Println(floor)
	var lockWaits *lockSampler
	if b.db == "postgres" {
		lockWaits = startLockSampler(dbURL)
	}
	var pg0 map[int]time.Duration
	if b.db == "postgres" {
		pg0 = backendCPU(dbURL)
	}
	var seq atomic.Int64
	cpu0, start := p.cpu(), time.Now()
	ours := run("notifyd: signed POST /v1/notifications (201)", b.conns, b.duration, func(ctx context.Context, _ int) error {
		return post(ctx, p.key, "POST", "/v1/notifications", chatBody(seq.Add(1)), http.StatusCreated)
	})
	inWindow := sk.unique()
	fmt.Println(ours)
	if ours.fail > 0 {
		fmt.Printf("server log:\n%s\n", p.logTail())
	}
	ratio("accepted / bare handler", ours.rate(), base.rate())
	ratio("accepted / bare handler, own process", ours.rate(), own.rate())
	ratio("durable minimum / bare handler", floor.rate(), base.rate())
	ratio("accepted / durable minimum", ours.rate(), floor.rate())
	if b.role == "api" {
		fmt.Printf("%-44s %9.2f ms\n", "server CPU per accepted message", float64((p.cpu()-cpu0).Microseconds())/1000/float64(ours.ok))
		return nil
	}
	// Wait for every accepted message to reach the sink.
	deadline := time.Now().Add(10 * time.Minute)
	for int64(sk.unique()) < ours.ok && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	cpu := p.cpu() - cpu0
	var pgCPU time.Duration
	if pg0 != nil {
		for pid, c := range backendCPU(dbURL) {
			pgCPU += c - pg0[pid]
		}
	}
	time.Sleep(2 * time.Second) // late duplicates
	last := time.Unix(0, sk.last.Load())
	took := last.Sub(start)
	got := int64(sk.unique())
	fmt.Printf("%-44s %9.0f/s  (%d in %s; %d within the 10 s load: %.0f/s)\n", "notifyd: delivered to the sink", float64(got)/took.Seconds(),
		got, took.Round(time.Millisecond), inWindow, float64(inWindow)/ours.elapsed.Seconds())
	fmt.Printf("%-44s %9d\n", "duplicates (a text that arrived twice)", sk.dups.Load())
	fmt.Printf("%-44s %9d\n", "undelivered (accepted, never arrived)", ours.ok-got)
	fmt.Printf("%-44s %9.2f ms  (%.1f s CPU for %d messages)\n", "server CPU per accepted and delivered message",
		float64(cpu.Microseconds())/1000/float64(ours.ok), cpu.Seconds(), ours.ok)
	if pg0 != nil {
		fmt.Printf("%-44s %9.2f ms  (%.1f s CPU of its backends; same host only)\n", "database CPU per message",
			float64(pgCPU.Microseconds())/1000/float64(ours.ok), pgCPU.Seconds())
	}
	if lockWaits != nil {
		fmt.Printf("%-44s %9d  (samples %d)\n", "pg_stat_activity: most waiting on a lock", lockWaits.stop(), lockWaits.samples.Load())
	}
	return nil
}

// lockSampler counts, every 100 ms, the connections of the database that
// wait on a lock, and keeps the largest count seen.
type lockSampler struct {
	max, samples atomic.Int64
	done         chan struct{}
	wg           sync.WaitGroup
}

func startLockSampler(dbURL string) *lockSampler {
	l := &lockSampler{done: make(chan struct{})}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		conn, err := pgx.Connect(context.Background(), dbURL)
		if err != nil {
			return
		}
		defer conn.Close(context.Background())
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-l.done:
				return
			case <-t.C:
			}
			var n int64
			if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
				WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&n); err != nil {
				continue
			}
			l.samples.Add(1)
			if n > l.max.Load() {
				l.max.Store(n)
			}
		}
	}()
	return l
}

func (l *lockSampler) stop() int64 {
	close(l.done)
	l.wg.Wait()
	return l.max.Load()
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}

// backendCPU is the CPU time so far of each backend process of the
// database at dbURL (the server must run on this host).
func backendCPU(dbURL string) map[int]time.Duration {
	out := map[int]time.Duration{}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return out
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`)
	if err != nil {
		return out
	}
	defer rows.Close()
	for rows.Next() {
		var pid int
		if rows.Scan(&pid) == nil {
			out[pid] = procCPU(pid)
		}
	}
	return out
}

// serveWithSink starts the default serve (16 connections unless -conns)
// with a local sink, for the A B A B scenarios; what heads the output.
// The caller closes the sink's server.
func (b *bench) serveWithSink(ctx context.Context, what string) (*notifydProc, *sink, error) {
	if !flagSet("conns") {
		b.conns = 16
	}
	header(what, b)
	dbURL, err := b.databaseURL()
	if err != nil {
		return nil, nil, err
	}
	sk, err := newSink()
	if err != nil {
		return nil, nil, err
	}
	p, err := b.startServe(ctx, dbURL, "all", b.conns)
	if err != nil {
		sk.srv.Close()
		return nil, nil, err
	}
	return p, sk, nil
}

// drained prints a phase's result, waits until the sink got every message
// it accepted (before is the sink's count when the phase began), and
// prints how long that took.
func (p *notifydProc) drained(sk *sink, phase int, before int64, res result) {
	fmt.Println(res)
	if res.fail > 0 {
		fmt.Printf("server log:\n%s\n", p.logTail())
	}
	start := time.Now()
	for int64(sk.unique())-before < res.ok && time.Since(start) < 5*time.Minute {
		time.Sleep(20 * time.Millisecond)
	}
	fmt.Printf("%-44s %9d  (drained %s after the load)\n", fmt.Sprintf("phase %d delivered", phase+1), int64(sk.unique())-before,
		time.Since(start).Round(time.Millisecond))
}

// drainedCPU is drained, then the server's CPU since cpu0 per message the
// phase accepted.
func (p *notifydProc) drainedCPU(sk *sink, phase int, before int64, cpu0 time.Duration, res result) {
	p.drained(sk, phase, before, res)
	fmt.Printf("%-44s %9.0f µs\n", "server CPU per message, accepted and delivered",
		float64((p.cpu()-cpu0).Microseconds())/float64(max(res.ok, 1)))
}
