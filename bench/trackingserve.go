package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/notifyd/notifyd/client"
)

// The tracking scenarios measure e-mail engagement (issue 35, item 4) on
// the real `notifyd serve` binary, with the campaignserve scenario's
// setup (its Resend fake, its subscriber import):
//
//   - trackingserve: the same 100,000-subscriber campaign (an HTML part
//     with three links) sent with tracking off and on, A B A B B A in one
//     run (the last pair reversed so a drift as the database grows weighs
//     on both sides alike). Target: on within 1.1x of off. Each round
//     starts from the same state: the last round's requests all recorded
//     and the server and database idle (that tail is the last round's
//     cost, counted in it), then on PostgreSQL (-vacuum, the default)
//     VACUUM ANALYZE and CHECKPOINT, as autovacuum and the checkpointer
//     would have done between two campaigns.
//   - clickserve: the click redirect (GET /t/c/{token}) of a campaign's
//     tracked links, paced at -rate (default 5,000/s) for -duration from
//     64 connections, latency measured from each click's scheduled time
//     (a late start counts); then the clicks recorded are counted from the
//     campaign's statistics. Target: 5,000/s with p99 <= 20 ms. Beside it,
//     each click's HTTP round trip and the server's own handling (its
//     access log's duration) tell the server's time from the wait for a
//     free connection or for the 2 cores the client and server share.

// trackedHTML is the campaign's HTML part: three links, an unsubscribe
// footer added by the campaign.
var trackedHTML = `<html><body><h1>Weekly news for {{name}}</h1><p>` + strings.Repeat("News and offers. ", 40) +
	`</p><p><a href="https://shop.example.com/sale?utm_source=news&amp;utm_medium=email">This week's sale</a> · ` +
	`<a href="https://shop.example.com/new">New arrivals</a> · <a href="https://blog.example.com/2026/11/story">Our story</a></p>` +
	`<p>Your plan: {{plan}}.</p></body></html>`

// putTracking sets the workspace's tracking.
func putTracking(ctx context.Context, owner *client.Client, on bool) error {
	r, err := owner.Dashboard(ctx, "PUT", "/v1/tracking/workspace", map[string]any{"opens": on, "clicks": on})
	if err != nil {
		return err
	}
	if r.Status != 200 {
		return fmt.Errorf("tracking: %d %s", r.Status, r.Body)
	}
	return nil
}

// sendCampaignTo sends a campaign and waits until n recipients reached the
// fake: the time from the send call to the last mail.
func sendCampaignTo(ctx context.Context, owner *client.Client, fake *resendFake, id string, n int) (time.Duration, error) {
	start := time.Now()
	r, err := owner.Dashboard(ctx, "POST", "/v1/newsletter/campaigns/"+id+"/send", nil)
	if err != nil {
		return 0, err
	}
	if r.Status != 200 {
		return 0, fmt.Errorf("send campaign: %d %s", r.Status, r.Body)
	}
	deadline := start.Add(campaignServeWait)
	for fake.unique() < n {
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("%d of %d mails after %s", fake.unique(), n, campaignServeWait)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return time.Unix(0, fake.last.Load()).Sub(start), nil
}

// trackingServe: a campaign with tracking off against the same with
// tracking on, in the rounds -rounds gives (default off,on,off,on,on,off).
func (b *bench) trackingServe(ctx context.Context) error {
	n := fanoutSubscribers
	if b.n > 20000 {
		n = b.n
	}
	if b.subscribers > 0 {
		n = b.subscribers
	}
	var order []bool
	for _, r := range strings.Split(b.rounds, ",") {
		switch strings.TrimSpace(r) {
		case "on":
			order = append(order, true)
		case "off":
			order = append(order, false)
		default:
			return fmt.Errorf("-rounds: %q is neither on nor off", r)
		}
	}
	fmt.Printf("# campaign of %d subscribers (HTML, 3 links) with tracking %s, default notifyd serve on %s, GOMAXPROCS %d, %s\n",
		n, b.rounds, b.db, runtime.GOMAXPROCS(0), time.Now().UTC().Format(time.RFC3339))
	p, fake, err := b.mailServe(ctx)
	if err != nil {
		return err
	}
	if _, err := importSubscribers(ctx, p.owner, n); err != nil {
		return err
	}
	dbc, err := newDBCPU(ctx, b.db, p.dbURL)
	if err != nil {
		return err
	}
	defer dbc.close()
	var tracked, links atomic.Int64
	fake.onHTML = func(to []string, html string) {
		if strings.Contains(html, "/t/o/") {
			tracked.Add(int64(len(to)))
		}
		links.Add(int64(strings.Count(html, "/t/c/")))
	}
	took := map[bool][]time.Duration{}
	recorded := map[bool][]time.Duration{}
	for i, on := range order {
		// Every round starts from the same state: the server idle (the
		// last round recorded, its notes forgotten), and with -vacuum the
		// last round's dead rows vacuumed, the statistics fresh and the
		// dirty pages written (what autovacuum and the checkpointer do
		// between campaigns on a server that keeps up). Without this a
		// round began while the last one's records were still being
		// written, and paid for them.
		if b.vacuum && dbc != nil {
			t0 := time.Now()
			for _, q := range []string{"VACUUM ANALYZE", "CHECKPOINT"} {
				if _, err := dbc.conn.Exec(ctx, q); err != nil {
					return err
				}
			}
			fmt.Printf("  VACUUM ANALYZE and CHECKPOINT before round %d: %.1f s\n", i+1, time.Since(t0).Seconds())
		}
		if err := putTracking(ctx, p.owner, on); err != nil {
			return err
		}
		id, err := createCampaign(ctx, p.owner, map[string]any{"name": fmt.Sprintf("round %d", i+1), "channel": "email",
			"subject": "Weekly news for {{name}}", "contentText": fanoutText, "contentHtml": trackedHTML,
			"isAdvertisement": false, "includeUnsubscribe": true})
		if err != nil {
			return err
		}
		fake.reset()
		tracked.Store(0)
		links.Store(0)
		cpu0, db0 := p.cpu(), dbc.snapshot(ctx)
		start := time.Now()
		d, err := sendCampaignTo(ctx, p.owner, fake, id, n)
		if err != nil {
			return err
		}
		// The round's whole cost: until every request of the campaign
		// is recorded and the server is idle again, so a round's tail
		// is counted in that round, not in the next.
		recAt, err := waitRecorded(ctx, p.owner, id, n)
		if err != nil {
			return err
		}
		rec := recAt.Sub(start)
		idle := waitIdle(ctx, p, dbc)
		cpu := p.cpu() - cpu0
		dbCPU := ""
		if dbc != nil {
			dbCPU = fmt.Sprintf("; database CPU %.1f s", cpuSince(db0, dbc.snapshot(ctx)).Seconds())
		}
		took[on] = append(took[on], d)
		recorded[on] = append(recorded[on], rec)
		name := map[bool]string{false: "off", true: "on"}[on]
		fmt.Printf("round %d, tracking %-3s %26.1f s  (%.0f mails/s; %d duplicates; %d with a pixel, %d links rewritten; all recorded at %.1f s, idle at %.1f s; server CPU %.1f s, %.0f µs a mail%s)\n",
			i+1, name, d.Seconds(), float64(n)/d.Seconds(), fake.dups.Load(), tracked.Load(), links.Load(), rec.Seconds(), idle.Sub(start).Seconds(),
			cpu.Seconds(), float64(cpu.Microseconds())/float64(n), dbCPU)
		if want := map[bool]int64{false: 0, true: int64(n)}[on]; tracked.Load() != want {
			return fmt.Errorf("round %d: %d mails with a pixel, want %d", i+1, tracked.Load(), want)
		}
	}
	sum := func(ds []time.Duration) (s time.Duration) {
		for _, d := range ds {
			s += d
		}
		return s
	}
	for i := range min(len(took[true]), len(took[false])) {
		fmt.Printf("%-44s %8.3f\n", fmt.Sprintf("pair %d: on / off", i+1), took[true][i].Seconds()/took[false][i].Seconds())
	}
	if len(took[true]) > 0 && len(took[false]) > 0 {
		on, off := sum(took[true]).Seconds(), sum(took[false]).Seconds()
		fmt.Printf("%-44s %8.3f  (%.1f s / %.1f s; target <= 1.1)\n", "ratio tracking on / off (means)",
			on/float64(len(took[true]))/(off/float64(len(took[false]))), on, off)
		on, off = sum(recorded[true]).Seconds(), sum(recorded[false]).Seconds()
		fmt.Printf("%-44s %8.3f  (%.1f s / %.1f s)\n", "  the same, send to all recorded",
			on/float64(len(recorded[true]))/(off/float64(len(recorded[false]))), on, off)
	}
	// The server's soft memory limit (96 MiB unless GOMEMLIMIT says
	// otherwise) is what its live heap is measured against: above it the
	// collector runs back to back (docs/BENCHMARKS.md, session 20).
	fmt.Printf("%-44s %9.1f MB\n", "peak RSS of notifyd serve (VmHWM, whole run)", float64(procStatusOf(p.cmd.Process.Pid, "VmHWM"))/1024)
	if t := p.logTail(); t != "" {
		fmt.Printf("server log (tail):\n%s\n", t)
	}
	return nil
}

// waitRecorded waits until every one of the n requests of campaign id is
// in a final state, polling its detail (whose counts cost the database a
// few hundred milliseconds on 100,000 rows: once a second), and returns
// when that was first seen.
func waitRecorded(ctx context.Context, owner *client.Client, id string, n int) (time.Time, error) {
	deadline := time.Now().Add(campaignServeWait)
	for {
		d, err := getCampaign(ctx, owner, id)
		if err != nil {
			return time.Time{}, err
		}
		s := d.DeliveryStats
		if s["queued"] == 0 && s["processing"] == 0 && s["sent"]+s["failed"]+s["canceled"] >= n {
			return time.Now(), nil
		}
		if time.Now().After(deadline) {
			return time.Time{}, fmt.Errorf("campaign %s: not recorded after %s: %v", id, campaignServeWait, s)
		}
		time.Sleep(time.Second)
	}
}

// waitIdle waits (at most a minute) until a second passes in which the
// server and the database's backends used under 30 ms of CPU each: the
// outcome notes forgotten, the group commits empty.
func waitIdle(ctx context.Context, p *notifydProc, dbc *dbCPU) time.Time {
	const quiet = 30 * time.Millisecond
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); {
		c0, d0 := p.cpu(), dbc.snapshot(ctx)
		time.Sleep(time.Second)
		if p.cpu()-c0 < quiet && cpuSince(d0, dbc.snapshot(ctx)) < quiet {
			return time.Now().Add(-time.Second)
		}
	}
	return time.Now()
}

// mailServe starts the default server (campaignserve and the tracking
// scenarios) with its mail route to a fresh Resend fake.
func (b *bench) mailServe(ctx context.Context) (*notifydProc, *resendFake, error) {
	dbURL, err := b.databaseURL()
	if err != nil {
		return nil, nil, err
	}
	if b.db == "postgres" {
		base := os.Getenv("NOTIFYD_BENCH_DATABASE_URL")
		if base == "" {
			base = "postgres://postgres@127.0.0.1:5432/test"
		}
		fmt.Printf("database: %s (fresh schema), %s\n", redactURL(base), pgSettings(ctx, dbURL))
	}
	fake, err := newResendFake()
	if err != nil {
		return nil, nil, err
	}
	b.cleanups = append(b.cleanups, func() { fake.srv.Close() })
	p, err := b.startServe(ctx, dbURL, "all", 8)
	if err != nil {
		return nil, nil, err
	}
	err = route(ctx, p.owner, "mailx_email", "email", map[string]string{"mailx_api_key": "re_bench", "mailx_from_email": "from@example.com",
		"base_url": fake.url, "dispatch_max_requests_per_second": "0"})
	return p, fake, err
}

var clickHref = regexp.MustCompile(`href="([^"]*/t/c/[^"]+)"`)

// clickServe: the click redirect paced at a target rate.
func (b *bench) clickServe(ctx context.Context) error {
	const recipients = 2000
	rate := b.rate
	if rate <= 0 {
		rate = 5000
	}
	dur := b.duration
	fmt.Printf("# click redirect paced at %d/s for %s over the tracked links of a %d-recipient campaign, default notifyd serve on %s, GOMAXPROCS %d, %s\n",
		rate, dur, recipients, b.db, runtime.GOMAXPROCS(0), time.Now().UTC().Format(time.RFC3339))
	p, fake, err := b.mailServe(ctx)
	if err != nil {
		return err
	}
	if _, err := importSubscribers(ctx, p.owner, recipients); err != nil {
		return err
	}
	if err := putTracking(ctx, p.owner, true); err != nil {
		return err
	}
	var mu sync.Mutex
	var urls []string
	fake.onHTML = func(_ []string, html string) {
		mu.Lock()
		for _, m := range clickHref.FindAllStringSubmatch(html, -1) {
			urls = append(urls, m[1])
		}
		mu.Unlock()
	}
	id, err := createCampaign(ctx, p.owner, map[string]any{"name": "clicks", "channel": "email", "subject": "News", "contentText": "news",
		"contentHtml": trackedHTML, "isAdvertisement": false, "includeUnsubscribe": true})
	if err != nil {
		return err
	}
	sentAt := time.Now()
	if _, err := sendCampaignTo(ctx, p.owner, fake, id, recipients); err != nil {
		return err
	}
	if len(urls) != 3*recipients {
		return fmt.Errorf("%d tracked links received, want %d", len(urls), 3*recipients)
	}
	// Past the scanner window: every click counts as a person's.
	time.Sleep(time.Until(sentAt.Add(11 * time.Second)))

	const conns = 64
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost = conns, conns
	hc := &http.Client{Transport: tr, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	click := func(u string) error {
		req, _ := http.NewRequestWithContext(ctx, "GET", u, nil)
		req.Header.Set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64; rv:132.0) Gecko/20100101 Firefox/132.0")
		res, err := hc.Do(req)
		if err != nil {
			return err
		}
		res.Body.Close()
		if res.StatusCode != http.StatusFound || !strings.HasPrefix(res.Header.Get("Location"), "https://") {
			return fmt.Errorf("answer %d to %s", res.StatusCode, res.Header.Get("Location"))
		}
		return nil
	}
	// Warm the connections up (not counted: these clicks are counted
	// below with the rest).
	var warm sync.WaitGroup
	for i := range conns {
		warm.Add(1)
		go func() { defer warm.Done(); _ = click(urls[i]) }()
	}
	warm.Wait()

	type tick struct{ at time.Time }
	work := make(chan tick, rate)
	var lats, trips [conns][]time.Duration
	var errs atomic.Int64
	var firstErr atomic.Pointer[error]
	var done sync.WaitGroup
	var next atomic.Int64
	for w := range conns {
		done.Add(1)
		go func() {
			defer done.Done()
			for t := range work {
				u := urls[int(next.Add(1))%len(urls)]
				began := time.Now()
				if err := click(u); err != nil {
					errs.Add(1)
					firstErr.CompareAndSwap(nil, &err)
					continue
				}
				lats[w] = append(lats[w], time.Since(t.at))
				trips[w] = append(trips[w], time.Since(began))
			}
		}()
	}
	cpu0 := p.cpu()
	start := time.Now()
	interval := time.Second / time.Duration(rate)
	sent := 0
	for at := start; at.Before(start.Add(dur)); at = at.Add(interval) {
		if d := time.Until(at); d > 0 {
			time.Sleep(d)
		}
		work <- tick{at: at}
		sent++
	}
	close(work)
	done.Wait()
	elapsed := time.Since(start)
	cpu := p.cpu() - cpu0
	all, trip := sorted(lats[:]), sorted(trips[:])
	if len(all) == 0 {
		return errors.New("no click answered")
	}
	fmt.Printf("%-44s %9.0f/s  (%d clicks in %s, %d errors; target >= 5,000/s)\n", "click redirects answered", float64(len(all))/elapsed.Seconds(),
		len(all), elapsed.Round(time.Millisecond), errs.Load())
	fmt.Printf("%-44s %s  (target p99 <= 20ms)\n", "latency from scheduled time", quantiles(all))
	// Where a late click's time went: the round trip from the client's
	// request to its answer, and the server's own handling of it (its
	// access log's duration: routing to the answer's headers).
	fmt.Printf("%-44s %s\n", "  of which the HTTP round trip", quantiles(trip))
	if srv := p.loggedDurations(clickPathPrefix); len(srv) > 0 {
		fmt.Printf("%-44s %s  (%d logged)\n", "  of which the server's handling", quantiles(srv), len(srv))
	}
	fmt.Printf("%-44s %9.1f s  (%.0f µs per click)\n", "server CPU during the load", cpu.Seconds(), float64(cpu.Microseconds())/float64(len(all)))
	if e := firstErr.Load(); e != nil {
		fmt.Printf("first error: %v\n", *e)
	}
	// Every answered click is recorded, a moment later.
	want := len(all) + conns
	var got int
	for deadline := time.Now().Add(time.Minute); ; {
		r, err := p.owner.Dashboard(ctx, "GET", "/v1/newsletter/campaigns/"+id+"/stats", nil)
		if err != nil {
			return err
		}
		var st struct {
			Clicked int `json:"clicked"`
			Links   []struct {
				Clicks, LikelyScannerClicks int
			} `json:"links"`
		}
		if err := r.Decode(&st); err != nil {
			return err
		}
		got = 0
		for _, l := range st.Links {
			got += l.Clicks + l.LikelyScannerClicks
		}
		if got >= want || time.Now().After(deadline) {
			fmt.Printf("%-44s %9d  of %d answered (%d recipients clicked)\n", "clicks recorded", got, want, st.Clicked)
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if t := p.logTail(); t != "" {
		fmt.Printf("server log (tail):\n%s\n", t)
	}
	return nil
}

// clickPathPrefix is how the access log shows a click's path.
const clickPathPrefix = "/t/c/"

// sorted joins per-connection samples and sorts them.
func sorted(parts [][]time.Duration) []time.Duration {
	var all []time.Duration
	for _, l := range parts {
		all = append(all, l...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	return all
}

// quantiles prints p50, p90, p99 and the maximum of sorted samples.
func quantiles(all []time.Duration) string {
	if len(all) == 0 {
		return "no samples"
	}
	q := func(f float64) time.Duration {
		return all[min(len(all)-1, int(float64(len(all))*f))].Round(10 * time.Microsecond)
	}
	return fmt.Sprintf("p50 %s  p90 %s  p99 %s  max %s", q(.5), q(.9), q(.99), all[len(all)-1].Round(10*time.Microsecond))
}

// loggedDurations reads the durations of the access log's lines for
// paths starting with prefix, sorted.
func (p *notifydProc) loggedDurations(prefix string) []time.Duration {
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		return nil
	}
	var out []time.Duration
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.Contains(line, " msg=http ") || !strings.Contains(line, " path="+prefix) {
			continue
		}
		_, rest, ok := strings.Cut(line, " duration=")
		if !ok {
			continue
		}
		if d, err := time.ParseDuration(strings.Fields(rest + " ")[0]); err == nil {
			out = append(out, d)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
