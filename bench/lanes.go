package main

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/notifyd/notifyd/client"
)

// The lanes scenario is issue 31's item 2 at full scale: a campaign of
// -n subscribers (20,000) on one email provider limited to 200 messages/s,
// mailed by default `notifyd serve`; while it drains, one transactional
// email every 250 ms to the same provider through POST /v1/notifications,
// and one email every 250 ms of another workspace through its own
// provider. It prints how late the transactional mails and the other
// workspace's mails reach their vendor after their 201 (p50, p99, max),
// the campaign's rate against its limit, and the estimated finish read
// early in the run against the real one. Targets: p99 <= 1 s, rate >=
// 0.9 of the limit, estimate within 10% of the run.

const lanesRate = 200

// lateness collects, per address, when its send was answered 201 and
// when its mail reached the vendor.
type lateness struct {
	mu       sync.Mutex
	accepted map[string]time.Time
	arrived  map[string]time.Time
}

func newLateness() *lateness {
	return &lateness{accepted: map[string]time.Time{}, arrived: map[string]time.Time{}}
}

func (l *lateness) mail(addr string, at time.Time) {
	l.mu.Lock()
	if _, ok := l.arrived[addr]; !ok {
		l.arrived[addr] = at
	}
	l.mu.Unlock()
}

// report prints the lateness of the mails whose address starts with prefix.
func (l *lateness) report(name, prefix string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var ds []time.Duration
	lost := 0
	for addr, at := range l.accepted {
		if !strings.HasPrefix(addr, prefix) {
			continue
		}
		got, ok := l.arrived[addr]
		if !ok {
			lost++
			continue
		}
		ds = append(ds, got.Sub(at))
	}
	if len(ds) == 0 {
		fmt.Printf("%-44s none arrived (%d sent)\n", name, lost)
		return
	}
	slices.Sort(ds)
	p99 := ds[min(len(ds)-1, len(ds)*99/100)]
	fmt.Printf("%-44s p50 %s  p99 %s  max %s  (%d mails, %d not arrived; target p99 <= 1s)\n", name,
		ds[len(ds)/2].Round(time.Millisecond), p99.Round(time.Millisecond), ds[len(ds)-1].Round(time.Millisecond), len(ds), lost)
}

// every sends one email of send(i) every 250 ms until stop is closed.
func (l *lateness) every(ctx context.Context, k *client.Client, prefix string, stop <-chan struct{}, wg *sync.WaitGroup) {
	defer wg.Done()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		addr := fmt.Sprintf("%s%05d@example.com", prefix, i)
		r, err := k.Signed(ctx, "POST", "/v1/notifications", map[string]any{"channel": "email",
			"recipient": map[string]any{"address": addr}, "content": map[string]any{"title": "Your code", "text": "123456"}})
		if err != nil || r.Status != 201 {
			fmt.Printf("send %s: %v %v\n", addr, err, r)
			continue
		}
		l.mu.Lock()
		l.accepted[addr] = time.Now()
		l.mu.Unlock()
	}
}

func (b *bench) lanes(ctx context.Context) error {
	n := max(b.n, 1000)
	fmt.Printf("# lanes: campaign of %d on one email provider limited to %d/s, transactional mail every 250 ms to it, another workspace's mail every 250 ms; default notifyd serve on %s, GOMAXPROCS %d, %s\n",
		n, lanesRate, b.db, runtime.GOMAXPROCS(0), time.Now().UTC().Format(time.RFC3339))
	dbURL, err := b.databaseURL()
	if err != nil {
		return err
	}
	late := newLateness()
	fakes := make([]*resendFake, 2)
	for i := range fakes {
		if fakes[i], err = newResendFake(); err != nil {
			return err
		}
		fakes[i].onMail = late.mail
		f := fakes[i]
		b.cleanups = append(b.cleanups, func() { f.srv.Close() })
	}
	p, err := b.startServe(ctx, dbURL, "all", 8)
	if err != nil {
		return err
	}
	cfg := func(f *resendFake) map[string]string {
		return map[string]string{"mailx_api_key": "re_bench", "mailx_from_email": "from@example.com", "base_url": f.url,
			"dispatch_max_requests_per_second": "0"}
	}
	acct, err := provider(ctx, p.owner, "mailx_email", cfg(fakes[0]))
	if err != nil {
		return err
	}
	if err := routes(ctx, p.owner, "email", acct); err != nil {
		return err
	}
	if r, err := p.owner.Dashboard(ctx, "PUT", "/v1/limits/dispatch", map[string]any{"scope": "provider", "targetId": acct,
		"ratePerSecond": lanesRate}); err != nil || r.Status != 200 {
		return fmt.Errorf("dispatch limit: %v %v", err, r)
	}
	other, err := p.bootstrapAnother(ctx, "other", "other@example.com")
	if err != nil {
		return err
	}
	if err := route(ctx, other, "mailx_email", "email", cfg(fakes[1])); err != nil {
		return err
	}
	otherKey, _, err := other.CreateAPIKey(ctx, "other", "notifications:send")
	if err != nil {
		return err
	}
	for start := 0; start < n; start += 5000 {
		items := make([]map[string]any, 0, 5000)
		for i := start; i < min(n, start+5000); i++ {
			items = append(items, map[string]any{"channel": "email", "address": fmt.Sprintf("user%06d@example.com", i+1)})
		}
		r, err := p.owner.Dashboard(ctx, "POST", "/v1/newsletter/subscribers/import", map[string]any{
			"subscribers": items, "consentStatus": "subscribed", "consentSource": "bench"})
		if err != nil || r.Status != 200 {
			return fmt.Errorf("import: %v %v", err, r)
		}
	}
	r, err := p.owner.Dashboard(ctx, "POST", "/v1/newsletter/campaigns", map[string]any{
		"name": "lanes", "channel": "email", "subject": "Weekly news", "contentText": fanoutText, "isAdvertisement": false, "includeUnsubscribe": false})
	if err != nil || r.Status != 201 {
		return fmt.Errorf("create campaign: %v %v", err, r)
	}
	var created struct {
		Campaign struct{ ID string } `json:"campaign"`
	}
	if err := r.Decode(&created); err != nil {
		return err
	}
	id := created.Campaign.ID

	// A baseline first: the same two streams for 10 s without the
	// campaign, so the batch windows' share of the lateness shows.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go late.every(ctx, p.key, "base-tx", stop, &wg)
	go late.every(ctx, otherKey, "base-other", stop, &wg)
	time.Sleep(10 * time.Second)
	close(stop)
	wg.Wait()
	stop = make(chan struct{})
	wg.Add(2)
	go late.every(ctx, p.key, "tx", stop, &wg)
	go late.every(ctx, otherKey, "other", stop, &wg)
	start := time.Now()
	if r, err := p.owner.Dashboard(ctx, "POST", "/v1/newsletter/campaigns/"+id+"/send", nil); err != nil || r.Status != 200 {
		return fmt.Errorf("send campaign: %v %v", err, r)
	}
	var estimate time.Time
	var estimatedAfter time.Duration
	deadline := start.Add(campaignServeWait)
	campaignMails := func() int {
		fakes[0].mu.Lock()
		defer fakes[0].mu.Unlock()
		k := 0
		for a := range fakes[0].seen {
			if strings.HasPrefix(a, "user") {
				k++
			}
		}
		return k
	}
	for campaignMails() < n && time.Now().Before(deadline) {
		if estimate.IsZero() && time.Since(start) > time.Second {
			if d, err := getCampaign(ctx, p.owner, id); err == nil && d.EstimatedFinishAt != nil {
				if at, err := time.Parse(time.RFC3339Nano, *d.EstimatedFinishAt); err == nil {
					estimate, estimatedAfter = at, time.Since(start)
				}
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	end := time.Unix(0, fakes[0].last.Load())
	time.Sleep(2 * time.Second)
	close(stop)
	wg.Wait()
	time.Sleep(2 * time.Second) // the last transactional mails

	got := campaignMails()
	run := end.Sub(start)
	fmt.Printf("%-44s %9d of %d  (duplicates %d)\n", "campaign recipients reached", got, n, fakes[0].dups.Load())
	fmt.Printf("%-44s %9.1f s  (%.1f/s, %.2f of the %d/s limit; target >= 0.90)\n", "campaign: send call to last mail", run.Seconds(),
		float64(got)/run.Seconds(), float64(got)/run.Seconds()/lanesRate, lanesRate)
	if !estimate.IsZero() {
		off := estimate.Sub(end)
		fmt.Printf("%-44s %9.1f s  (read %.1f s in; off by %+.1f s = %+.1f%% of the run; target within 10%%)\n", "estimated finish after send",
			estimate.Sub(start).Seconds(), estimatedAfter.Seconds(), off.Seconds(), 100*off.Seconds()/run.Seconds())
	} else {
		fmt.Printf("%-44s never shown\n", "estimated finish")
	}
	late.report("baseline (no campaign), first provider", "base-tx")
	late.report("baseline (no campaign), other workspace", "base-other")
	late.report("transactional, same provider: 201 to vendor", "tx")
	late.report("other workspace and provider: 201 to vendor", "other")
	if t := p.logTail(); t != "" {
		fmt.Printf("server log (tail):\n%s\n", t)
	}
	return nil
}
