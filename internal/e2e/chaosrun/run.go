// Package chaosrun is issue 31's chaos run (item 6), shared by the test
// (internal/e2e/crash, TestChaos) and the benchmark (`go run ./bench
// -scenario chaos`): two `serve --role api` and two `serve --role
// worker` processes on one PostgreSQL database, all of them reaching it
// through a TCP proxy, under a steady load of signed single sends to a
// chat channel with two failover routes. While the load runs:
//
//   - a worker is killed with SIGKILL and restarted at once, every 30 s
//     (the two workers in turn);
//   - the proxy cuts every database connection for 5 s, once;
//   - the first route's webhook answers 500 for 20 s, once;
//   - a second API key limited to BurstLimit requests receives twice as
//     many sends at once, spread over both api processes.
//
// Run measures and returns; the caller judges (the test asserts, the
// benchmark prints).
package chaosrun

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/notifyd/notifyd/client"
)

// Config is one run.
type Config struct {
	Binary      string        // the notifyd binary
	DatabaseURL string        // postgres://…, a fresh database or schema (search_path)
	Duration    time.Duration // of the send load; at least MinDuration
	Rate        int           // sends a second, over both api processes
	Senders     int           // concurrent senders
	BurstLimit  int           // the limited key's requests an hour; the burst sends twice as many
	// Settle is how long after the last fault Run waits for every
	// accepted request to be terminal before it looks them up anyway.
	Settle time.Duration
	// SinkLatency is how long the webhooks hold each message they take,
	// so that calls are in flight when a worker is killed.
	SinkLatency time.Duration
	// Logf, when set, is told each fault as it happens.
	Logf func(format string, args ...any)
	// LogDir, when set, receives each process's whole output, a file
	// each (Result.Logs holds only their ends).
	LogDir string
}

// The fault plan (issue 31, item 6).
const (
	KillEvery   = 30 * time.Second // a worker killed and restarted
	CutFor      = 5 * time.Second  // the database connection cut, once
	FailFor     = 20 * time.Second // the first route answering 500, once
	MinDuration = 40 * time.Second
	// unavailableGrace: a 503 up to this long after the database came
	// back is still the cut's (a pool finds its dead connections one by
	// one as it uses them).
	unavailableGrace = 5 * time.Second
)

// plan places the faults in a load of d: the kills every KillEvery, the
// last one 7 s before the load ends (so the run ends shortly after its
// last fault); the provider outage and the cut once, mid-run; the burst
// during the outage.
type plan struct {
	kills                  []time.Duration
	failAt, cutAt, burstAt time.Duration
}

func planFor(d time.Duration) plan {
	var p plan
	for at := d - 7*time.Second; at >= 5*time.Second; at -= KillEvery {
		p.kills = append([]time.Duration{at}, p.kills...)
	}
	p.failAt = max(3*time.Second, d/2-19500*time.Millisecond)
	p.burstAt = p.failAt + 15*time.Second
	p.cutAt = p.failAt + FailFor + 2*time.Second
	return p
}

// Result is what a run saw.
type Result struct {
	Sends        int         // sends of the steady load
	Answers      map[int]int // their HTTP statuses
	ClientErrors int         // sends with no HTTP answer
	FirstError   string
	// DuringCut: answers to the sends that overlapped the database cut;
	// UnavailableElsewhere: 503s to sends that started more than
	// unavailableGrace after it (or before it).
	DuringCut            map[int]int
	UnavailableElsewhere int
	ElsewhereExamples    []string

	Accepted     int            // 201s, the load's and the burst's
	Statuses     map[string]int // the accepted requests' status at the end
	Lost         int            // accepted and not found, or sent and never at a webhook
	LostExamples []string
	Delivered    int // accepted requests whose message reached a webhook
	Unaccepted   int // messages that arrived although their send was not answered 201
	Duplicates   int // extra arrivals of a message
	Resent       int // notifyd_delivery_takeovers_total{outcome="resent"}, summed over the worker processes
	Noted        int // {outcome="noted"}

	Kills      int
	Refused    int // calls the first route answered 500
	FailedOver int // messages the second route took while the first failed

	BurstLimit   int
	BurstAnswers map[int]int

	LastFault     time.Duration // offset of the end of the last fault from the load's start
	AllTerminal   bool          // every accepted request terminal within Settle of the last fault
	TerminalAfter time.Duration // when they were, after the last fault
	MaxDelay      time.Duration // longest time from a send to its message's first arrival
	P99Delay      time.Duration
	SlowExamples  []string // the slowest messages: sent at, arrived at
	// Stragglers: the requests of the last unfinished jobs seen before
	// all were terminal, as their lookup answers at the end.
	Stragglers []string

	Died   []string // processes that exited by themselves
	Events []string // the faults, as they happened
	Logs   string   // the processes' output
}

// Summary is the figures, one a line.
func (r *Result) Summary() []string {
	pct := func(n int) float64 { return 100 * float64(n) / float64(max(r.Accepted, 1)) }
	return []string{
		fmt.Sprintf("sends %d, answers %v, no answer %d %s; processes that died by themselves: %v", r.Sends, r.Answers,
			r.ClientErrors, r.FirstError, r.Died),
		fmt.Sprintf("answers to sends during the database cut: %v; 503s outside it: %d %v", r.DuringCut, r.UnavailableElsewhere,
			r.ElsewhereExamples),
		fmt.Sprintf("request limit %d, burst of %d over both api processes: %v", r.BurstLimit, 2*r.BurstLimit, r.BurstAnswers),
		fmt.Sprintf("accepted %d, their status at the end %v", r.Accepted, r.Statuses),
		fmt.Sprintf("delivered %d, lost %d %v, arrived unaccepted %d", r.Delivered, r.Lost, r.LostExamples, r.Unaccepted),
		fmt.Sprintf("duplicates %d (%.2f%% of accepted); takeovers resent %d, noted %d; workers killed %d",
			r.Duplicates, pct(r.Duplicates), r.Resent, r.Noted, r.Kills),
		fmt.Sprintf("first route refused %d calls with 500; the second took %d messages meanwhile", r.Refused, r.FailedOver),
		fmt.Sprintf("last fault ended at +%s; all terminal %t, %s after it; send to first arrival: max %s, p99 %s",
			r.LastFault.Round(time.Millisecond), r.AllTerminal, r.TerminalAfter.Round(time.Millisecond),
			r.MaxDelay.Round(time.Millisecond), r.P99Delay.Round(time.Millisecond)),
		fmt.Sprintf("slowest: %v", r.SlowExamples),
		fmt.Sprintf("the last to finish: %v", r.Stragglers),
	}
}

type acceptance struct {
	id string
	at time.Time // when the send started
}

type answer struct {
	start, end time.Time
	status     int
	api        int    // which api process answered (0 or 1)
	body       string // of an answer other than 201
}

type run struct {
	cfg    Config
	res    *Result
	start  time.Time
	proxy  *Proxy
	env    []string
	apis   []string
	owner  *client.Client
	key    *client.Client // the load's key, limits lifted
	burst  *client.Client // the limited key
	sinkA  *sink
	sinkB  *sink
	procs  []*proc // every process started, for the logs
	worker [2]*proc
	starts [2]int    // how many times each worker was started
	cutAt  time.Time // when the database connections were cut
	cutEnd time.Time // and reachable again
	// stragglers: requests unfinished at the last look before all were
	stragglers []string

	mu       sync.Mutex
	accepted map[string]acceptance // text -> request
	answers  []answer
	errs     []error
}

// Run runs the chaos plan and answers what it saw. An error is a run
// that could not be carried out (a process that would not start, a
// setup call refused), not a finding: findings are in the Result.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if cfg.Duration < MinDuration {
		return nil, fmt.Errorf("a chaos run needs at least %s of load", MinDuration)
	}
	r := &run{cfg: cfg, accepted: map[string]acceptance{}, res: &Result{Answers: map[int]int{}, DuringCut: map[int]int{},
		Statuses: map[string]int{}, BurstAnswers: map[int]int{}, BurstLimit: cfg.BurstLimit}}
	r.sinkA, r.sinkB = newSink(cfg.SinkLatency), newSink(cfg.SinkLatency)
	defer r.close()
	if err := r.setup(ctx); err != nil {
		return r.res, err
	}
	r.load(ctx)
	if err := errors.Join(r.errs...); err != nil {
		return r.res, err
	}
	r.settle(ctx)
	return r.res, r.check(ctx)
}

func (r *run) logf(format string, args ...any) {
	line := fmt.Sprintf("+%5.1fs ", time.Since(r.start).Seconds()) + fmt.Sprintf(format, args...)
	r.mu.Lock()
	r.res.Events = append(r.res.Events, line)
	r.mu.Unlock()
	if r.cfg.Logf != nil {
		r.cfg.Logf("%s", line)
	}
}

func (r *run) fail(err error) {
	r.mu.Lock()
	r.errs = append(r.errs, err)
	r.mu.Unlock()
}

func (r *run) close() {
	for _, p := range r.procs {
		p.kill()
	}
	var logs strings.Builder
	for _, p := range r.procs {
		out := p.out.String()
		if r.cfg.LogDir != "" {
			_ = os.WriteFile(filepath.Join(r.cfg.LogDir, strings.NewReplacer(" ", "-", "(", "", ")", "").Replace(p.name)+".log"), []byte(out), 0o644)
		}
		// River's failed fetches while the database is away: one line
		// per queue and poll, the rest would not fit.
		var kept []string
		fetches := 0
		for _, line := range strings.Split(out, "\n") {
			if strings.Contains(line, "Error fetching jobs") {
				fetches++
			} else {
				kept = append(kept, line)
			}
		}
		out = strings.Join(kept, "\n")
		if len(out) > 4000 {
			out = "…" + out[len(out)-4000:]
		}
		fmt.Fprintf(&logs, "== %s (%d lines of River's failed fetches left out)\n%s\n", p.name, fetches, out)
	}
	r.res.Logs = logs.String()
	if r.proxy != nil {
		r.proxy.Down()
	}
	r.sinkA.srv.Close()
	r.sinkB.srv.Close()
}

func (r *run) start1(name, readyURL string, env []string, args ...string) (*proc, error) {
	p, err := startProc(r.cfg.Binary, env, name, readyURL, args...)
	if p != nil {
		r.mu.Lock()
		r.procs = append(r.procs, p)
		r.mu.Unlock()
	}
	return p, err
}

// setup: the proxy, the schema and the owner, the four processes, the
// two routes and the two keys.
func (r *run) setup(ctx context.Context) error {
	u, err := url.Parse(r.cfg.DatabaseURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return fmt.Errorf("a chaos run needs a postgres:// database URL, not %q", r.cfg.DatabaseURL)
	}
	if r.proxy, err = NewProxy(u.Host); err != nil {
		return err
	}
	u.Host = r.proxy.Addr
	r.env = append(os.Environ(), "NOTIFYD_DATABASE_URL="+u.String(), "NOTIFYD_SECRET_KEY="+strings.Repeat("0", 63)+"7",
		"NOTIFYD_ALLOW_PRIVATE_TARGETS=true", "NOTIFYD_LOG_LEVEL=warn")
	boot := exec.CommandContext(ctx, r.cfg.Binary, "bootstrap", "--workspace", "Chaos", "--email", "owner@example.com",
		"--password", "correct horse battery")
	boot.Env = r.env
	out, err := boot.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			err = fmt.Errorf("bootstrap: %w: %s", err, ee.Stderr)
		}
		return err
	}
	var b struct {
		AccessToken string `json:"accessToken"`
	}
	if err := json.Unmarshal(out, &b); err != nil {
		return fmt.Errorf("bootstrap output %q: %w", out, err)
	}
	for i := range 2 {
		addr, err := freeAddr()
		if err != nil {
			return err
		}
		env := append(slices.Clone(r.env), "NOTIFYD_ADDR="+addr)
		if _, err := r.start1(fmt.Sprintf("api %d", i+1), "http://"+addr, env, "serve", "--role", "api", "--no-migrate"); err != nil {
			return err
		}
		r.apis = append(r.apis, "http://"+addr)
	}
	for i := range 2 {
		if err := r.startWorker(i); err != nil {
			return err
		}
	}
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	r.owner = client.New(r.apis[0])
	r.owner.HTTP, r.owner.Token = hc, b.AccessToken
	var routes []map[string]any
	for i, s := range []*sink{r.sinkA, r.sinkB} {
		var p struct {
			Provider struct {
				ID string `json:"id"`
			} `json:"provider"`
		}
		if err := r.dashboard(ctx, "POST", "/v1/providers", map[string]any{"providerKind": "chata_webhook",
			"displayName": fmt.Sprintf("chat %c", 'A'+i), "configJson": map[string]string{"chata_webhook_url": s.url()}}, http.StatusCreated, &p); err != nil {
			return err
		}
		routes = append(routes, map[string]any{"channel": "chata_webhook", "providerAccountId": p.Provider.ID, "priority": i + 1})
	}
	if err := r.dashboard(ctx, "PUT", "/v1/routes", map[string]any{"routes": routes}, http.StatusOK, nil); err != nil {
		return err
	}
	var keyID, burstID string
	if r.key, keyID, err = r.owner.CreateAPIKey(ctx, "load", "notifications:send", "notifications:read"); err != nil {
		return err
	}
	if r.burst, burstID, err = r.owner.CreateAPIKey(ctx, "limited", "notifications:send"); err != nil {
		return err
	}
	// The load's limits lifted (defaults: 600 and 2,000 a minute); the
	// burst key's set to BurstLimit an hour.
	lifted := map[string]any{"windowSeconds": 3600, "maxRequests": 1_000_000}
	for path, policy := range map[string]any{
		"/v1/limits/rate/workspace":           lifted,
		"/v1/limits/rate/api-keys/" + keyID:   lifted,
		"/v1/limits/rate/api-keys/" + burstID: map[string]any{"windowSeconds": 3600, "maxRequests": r.cfg.BurstLimit},
	} {
		if err := r.dashboard(ctx, "PUT", path, policy, http.StatusOK, nil); err != nil {
			return err
		}
	}
	return nil
}

// startWorker starts worker i (again, after a kill) on its probes
// listener, which serves /readyz and /metrics.
func (r *run) startWorker(i int) error {
	health := ""
	if old := r.worker[i]; old != nil {
		health = strings.TrimPrefix(old.url, "http://")
	} else {
		var err error
		if health, err = freeAddr(); err != nil {
			return err
		}
	}
	r.starts[i]++
	env := append(slices.Clone(r.env), "NOTIFYD_HEALTH_ADDR="+health)
	p, err := r.start1(fmt.Sprintf("worker %d (start %d)", i+1, r.starts[i]), "http://"+health, env, "serve", "--role", "worker", "--no-migrate")
	if err != nil {
		return err
	}
	r.worker[i] = p
	return nil
}

func (r *run) dashboard(ctx context.Context, method, path string, body any, want int, out any) error {
	resp, err := r.owner.Dashboard(ctx, method, path, body)
	if err != nil {
		return err
	}
	if resp.Status != want {
		return fmt.Errorf("%s %s: %d %s", method, path, resp.Status, resp.Body)
	}
	if out != nil {
		return resp.Decode(out)
	}
	return nil
}

// sendText posts one signed send of text with key through api i%2.
func (r *run) sendText(ctx context.Context, key *client.Client, i int, text string) (*client.Response, error) {
	k := *key
	k.BaseURL = r.apis[i%2]
	return k.Signed(ctx, "POST", "/v1/notifications", map[string]any{"channel": "chata_webhook",
		"recipient": map[string]any{"address": "ops"}, "content": map[string]any{"text": text}})
}

func (r *run) accept(resp *client.Response, text string, at time.Time) {
	var out struct {
		RequestID string `json:"requestId"`
	}
	if resp.Data(&out) != nil || out.RequestID == "" {
		r.fail(fmt.Errorf("a 201 without a request id: %s", resp.Body))
		return
	}
	r.mu.Lock()
	r.accepted[text] = acceptance{id: out.RequestID, at: at}
	r.mu.Unlock()
}

// load runs the senders for the configured duration and the fault plan
// beside them, until both are over.
func (r *run) load(ctx context.Context) {
	p := planFor(r.cfg.Duration)
	r.start = time.Now()
	at := func(d time.Duration) {
		select {
		case <-time.After(time.Until(r.start.Add(d))):
		case <-ctx.Done():
		}
	}
	var faults sync.WaitGroup
	ends := make(chan time.Duration, len(p.kills)+2)
	faults.Go(func() {
		at(p.failAt)
		r.sinkA.failing.Store(true)
		refused0, took0 := r.sinkA.refused.Load(), time.Now()
		r.logf("route 1's webhook answers 500 for %s", FailFor)
		at(p.failAt + FailFor)
		r.sinkA.failing.Store(false)
		r.res.Refused = int(r.sinkA.refused.Load() - refused0)
		r.res.FailedOver = r.sinkB.since(took0)
		ends <- time.Since(r.start)
		r.logf("route 1's webhook answers again (%d calls refused)", r.res.Refused)
	})
	faults.Go(func() {
		at(p.cutAt)
		r.cutAt = time.Now()
		r.proxy.Down()
		r.logf("database connections cut for %s", CutFor)
		at(p.cutAt + CutFor)
		if err := r.proxy.Up(); err != nil {
			r.fail(fmt.Errorf("proxy up: %w", err))
		}
		r.cutEnd = time.Now()
		ends <- time.Since(r.start)
		r.logf("database reachable again")
	})
	faults.Go(func() {
		for k, d := range p.kills {
			at(d)
			killed, err := r.kill(k % 2)
			if err != nil {
				r.fail(err)
				return
			}
			if k == len(p.kills)-1 {
				ends <- killed.Sub(r.start)
			}
		}
	})
	faults.Go(func() {
		at(p.burstAt)
		r.burstOver(ctx)
	})

	var seq atomic.Int64
	stop := make(chan struct{})
	tick := time.NewTicker(time.Second / time.Duration(r.cfg.Rate))
	var senders sync.WaitGroup
	for range r.cfg.Senders {
		senders.Go(func() {
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
				}
				i := int(seq.Add(1))
				text := fmt.Sprintf("chaos %d", i)
				start := time.Now()
				resp, err := r.sendText(ctx, r.key, i, text)
				a := answer{start: start, end: time.Now(), api: i % 2}
				if err != nil {
					r.mu.Lock()
					r.res.ClientErrors++
					if r.res.FirstError == "" {
						r.res.FirstError = fmt.Sprintf("(%s at +%.1fs)", err, start.Sub(r.start).Seconds())
					}
					r.mu.Unlock()
					continue
				}
				a.status = resp.Status
				if resp.Status == http.StatusCreated {
					r.accept(resp, text, start)
				} else {
					a.body = string(resp.Body)
				}
				r.mu.Lock()
				r.answers = append(r.answers, a)
				r.mu.Unlock()
			}
		})
	}
	at(r.cfg.Duration)
	close(stop)
	tick.Stop()
	senders.Wait()
	faults.Wait()
	close(ends)
	for d := range ends {
		r.res.LastFault = max(r.res.LastFault, d)
	}
	r.res.Sends = int(seq.Load())
	r.logf("load stopped after %d sends", r.res.Sends)
}

// kill scrapes worker i's takeover counters (they die with it), kills
// it with SIGKILL and starts it again at once; it answers when it
// killed it.
func (r *run) kill(i int) (time.Time, error) {
	w := r.worker[i]
	resent, err1 := w.counter(`notifyd_delivery_takeovers_total{outcome="resent"}`)
	noted, err2 := w.counter(`notifyd_delivery_takeovers_total{outcome="noted"}`)
	if err := errors.Join(err1, err2); err != nil {
		return time.Time{}, fmt.Errorf("%s's metrics before the kill: %w", w.name, err)
	}
	w.kill()
	killed := time.Now()
	r.mu.Lock()
	r.res.Resent += resent
	r.res.Noted += noted
	r.res.Kills++
	r.mu.Unlock()
	if err := r.startWorker(i); err != nil {
		return killed, err
	}
	r.logf("kill -9 %s at +%.1fs (its takeovers: %d resent, %d noted); restarted, ready in %s", w.name,
		killed.Sub(r.start).Seconds(), resent, noted, time.Since(killed).Round(time.Millisecond))
	return killed, nil
}

// burstOver sends twice BurstLimit sends at once with the limited key,
// alternating between the api processes, within one window of the limit
// (its windows are aligned to the epoch: the burst waits out an hour's
// turn).
func (r *run) burstOver(ctx context.Context) {
	if left := time.Until(time.Now().Truncate(time.Hour).Add(time.Hour)); left < 5*time.Second {
		time.Sleep(left + 100*time.Millisecond)
	}
	var wg sync.WaitGroup
	for i := range 2 * r.cfg.BurstLimit {
		wg.Go(func() {
			text := fmt.Sprintf("burst %d", i)
			start := time.Now()
			resp, err := r.sendText(ctx, r.burst, i, text)
			status := 0 // no answer
			if err == nil {
				status = resp.Status
				if status == http.StatusCreated {
					r.accept(resp, text, start)
				}
			}
			r.mu.Lock()
			r.res.BurstAnswers[status]++
			r.mu.Unlock()
		})
	}
	wg.Wait()
	r.logf("burst of %d sends over a limit of %d: %v", 2*r.cfg.BurstLimit, r.cfg.BurstLimit, r.res.BurstAnswers)
}

// settle waits, from the end of the load, until no request is queued or
// processing and as many are terminal as were accepted, or Settle after
// the last fault.
func (r *run) settle(ctx context.Context) {
	deadline := r.start.Add(r.res.LastFault + r.cfg.Settle)
	for {
		var m struct {
			ByStatus map[string]int `json:"byStatus"`
		}
		err := r.dashboard(ctx, "GET", "/v1/metrics", nil, http.StatusOK, &m)
		s := m.ByStatus
		if err == nil && s["queued"]+s["processing"] == 0 && s["sent"]+s["failed"]+s["canceled"] >= len(r.accepted) {
			r.res.AllTerminal = true
			r.res.TerminalAfter = time.Since(r.start) - r.res.LastFault
			r.logf("every request terminal: %v", s)
			return
		}
		var open struct {
			Jobs []struct {
				RequestID string `json:"notificationRequestId"`
			} `json:"jobs"`
		}
		if r.dashboard(ctx, "GET", "/v1/jobs", nil, http.StatusOK, &open) == nil && len(open.Jobs) > 0 {
			r.stragglers = r.stragglers[:0]
			for _, j := range open.Jobs[:min(len(open.Jobs), 3)] {
				r.stragglers = append(r.stragglers, j.RequestID)
			}
		}
		if time.Now().After(deadline) {
			r.res.TerminalAfter = time.Since(r.start) - r.res.LastFault
			r.logf("not every request terminal %s after the last fault: %v (%v)", r.cfg.Settle, s, err)
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// check looks every accepted request up and holds the webhooks'
// arrivals against them; it reads the live workers' takeover counters.
func (r *run) check(ctx context.Context) error {
	res := r.res
	for _, p := range r.procs {
		if p.died() {
			res.Died = append(res.Died, p.name)
		}
	}
	for _, w := range r.worker {
		resent, err1 := w.counter(`notifyd_delivery_takeovers_total{outcome="resent"}`)
		noted, err2 := w.counter(`notifyd_delivery_takeovers_total{outcome="noted"}`)
		if err := errors.Join(err1, err2); err != nil {
			return fmt.Errorf("%s's metrics: %w", w.name, err)
		}
		res.Resent += resent
		res.Noted += noted
	}
	cutAt, cutEnd := r.cutAt, r.cutEnd
	for _, a := range r.answers {
		res.Answers[a.status]++
		if !a.start.After(cutEnd) && !a.end.Before(cutAt) {
			res.DuringCut[a.status]++
		} else if a.status == http.StatusServiceUnavailable && (a.start.Before(cutAt) || a.start.After(cutEnd.Add(unavailableGrace))) {
			res.UnavailableElsewhere++
			if len(res.ElsewhereExamples) < 5 {
				res.ElsewhereExamples = append(res.ElsewhereExamples, fmt.Sprintf("api %d, +%.3fs to +%.3fs (cut +%.3fs to +%.3fs): %s",
					a.api+1, a.start.Sub(r.start).Seconds(), a.end.Sub(r.start).Seconds(), cutAt.Sub(r.start).Seconds(),
					cutEnd.Sub(r.start).Seconds(), a.body))
			}
		}
	}

	count, first := map[string]int{}, map[string]time.Time{}
	r.sinkA.arrivals(count, first)
	r.sinkB.arrivals(count, first)
	for text, n := range count {
		res.Duplicates += n - 1
		if _, ok := r.accepted[text]; !ok {
			res.Unaccepted++
		}
	}
	res.Accepted = len(r.accepted)
	type delay struct {
		d    time.Duration
		text string
	}
	var delays []delay
	type item struct{ text, id string }
	work := make(chan item)
	var wg sync.WaitGroup
	var mu sync.Mutex
	lost := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		res.Lost++
		if len(res.LostExamples) < 10 {
			res.LostExamples = append(res.LostExamples, fmt.Sprintf(format, args...))
		}
	}
	for w := range 8 {
		wg.Go(func() {
			k := *r.key
			k.BaseURL = r.apis[w%2]
			for it := range work {
				resp, err := k.Signed(ctx, "GET", "/v1/notifications/"+it.id, nil)
				if err != nil {
					lost("%s: lookup: %v", it.id, err)
					continue
				}
				if resp.Status != http.StatusOK {
					lost("%s: lookup: %d %s", it.id, resp.Status, resp.Body)
					continue
				}
				var st struct {
					Status string `json:"status"`
				}
				_ = resp.Data(&st)
				mu.Lock()
				res.Statuses[st.Status]++
				if slices.Contains(r.stragglers, it.id) {
					res.Stragglers = append(res.Stragglers, fmt.Sprintf("%s sent +%.1fs, arrived +%.1fs: %.1500s", it.text,
						r.accepted[it.text].at.Sub(r.start).Seconds(), first[it.text].Sub(r.start).Seconds(), resp.Body))
				}
				mu.Unlock()
				if st.Status == "sent" && count[it.text] == 0 {
					lost("%s (%q) sent and never at a webhook", it.id, it.text)
				}
			}
		})
	}
	for text, a := range r.accepted {
		if count[text] > 0 {
			res.Delivered++
			delays = append(delays, delay{first[text].Sub(a.at), text})
		}
		work <- item{text, a.id}
	}
	close(work)
	wg.Wait()
	if len(delays) > 0 {
		slices.SortFunc(delays, func(a, b delay) int { return cmp.Compare(a.d, b.d) })
		res.MaxDelay = delays[len(delays)-1].d
		res.P99Delay = delays[len(delays)*99/100].d
		for _, d := range delays[max(0, len(delays)-3):] {
			a := r.accepted[d.text]
			res.SlowExamples = append(res.SlowExamples, fmt.Sprintf("%s %s sent +%.1fs, arrived +%.1fs", d.text, a.id,
				a.at.Sub(r.start).Seconds(), first[d.text].Sub(r.start).Seconds()))
		}
	}
	return nil
}
