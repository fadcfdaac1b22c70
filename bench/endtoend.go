package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/notifyd/notifyd/client"
)

// listmonkCampaign is the peer figure of PERFORMANCE.md: listmonk delivers
// a 100,000-subscriber campaign to a local SMTP sink in 19.7 s on this
// kind of machine (not re-measured here: listmonk is not installed).
const listmonkCampaign = 19700 * time.Millisecond

// campaign: a 100,000-subscriber email campaign delivered end to end to
// the simulator (mailx_email, vendor call cap lifted, its batches of 100),
// timed from the send until every request is sent; against listmonk's
// figure and, in the same run, River's tuned no-op rate for as many jobs.
func (b *bench) campaign(ctx context.Context) error {
	n := fanoutSubscribers
	if b.n > 20000 {
		n = b.n
	}
	fmt.Printf("# campaign of %d subscribers delivered end to end on %s, GOMAXPROCS %d, %s\n", n, b.db, runtime.GOMAXPROCS(0), time.Now().UTC().Format(time.RFC3339))
	base, err := b.riverWorkBaseline(ctx, n)
	if err != nil {
		return err
	}
	fmt.Printf("%-44s %9.0f/s (%s for %d jobs)\n", "baseline: River tuned no-op work rate", base, time.Duration(float64(n)/base*float64(time.Second)).Round(time.Millisecond), n)
	_, simURL := b.sim()
	api, url, err := b.freshAPI(ctx)
	if err != nil {
		return err
	}
	cs, err := newCampaign(ctx, api, n)
	if err != nil {
		return err
	}
	owner := client.New(api.URL())
	owner.Token = cs.token
	if err := route(ctx, owner, "mailx_email", "email", map[string]string{"mailx_api_key": "re_bench", "mailx_from_email": "from@example.com",
		"base_url": simURL, "dispatch_max_requests_per_second": "0"}); err != nil {
		return err
	}
	if _, err := b.daemon(ctx, url, "worker"); err != nil {
		return err
	}
	rss := startPeakRSS()
	start := time.Now()
	if _, err := api.Rooms.Newsletter.SendCampaign(ctx, cs.actor, cs.id, nil, "https://notifyd.example"); err != nil {
		return err
	}
	if err := waitSent(ctx, api, n, start); err != nil {
		return err
	}
	took := time.Since(start)
	fmt.Printf("%-44s %9.0f/s  (%d in %s)\n", "notifyd: campaign sent end to end", float64(n)/took.Seconds(), n, took.Round(time.Millisecond))
	rss.report("peak RSS", "(daemons, database, simulator holding every mail; no target)")
	ratio("delivered / River no-op", float64(n)/took.Seconds(), base)
	ratio("listmonk's 19.7 s / ours (target > 1)", listmonkCampaign.Seconds(), took.Seconds())
	return nil
}

// provider registers an account of kind with configJson config.
func provider(ctx context.Context, owner *client.Client, kind string, config map[string]string) (string, error) {
	r, err := owner.Dashboard(ctx, "POST", "/v1/providers", map[string]any{"providerKind": kind, "displayName": kind, "configJson": config})
	if err != nil || r.Status != 201 {
		return "", fmt.Errorf("register provider: %v %s", err, r.Body)
	}
	var p struct {
		Provider struct{ ID string } `json:"provider"`
	}
	if err := r.Decode(&p); err != nil {
		return "", err
	}
	return p.Provider.ID, nil
}

// routes replaces the routes: the accounts in order of priority.
func routes(ctx context.Context, owner *client.Client, channel string, accountIDs ...string) error {
	var rs []map[string]any
	for i, id := range accountIDs {
		rs = append(rs, map[string]any{"channel": channel, "providerAccountId": id, "priority": i + 1})
	}
	r, err := owner.Dashboard(ctx, "PUT", "/v1/routes", map[string]any{"routes": rs})
	if err != nil || r.Status != 200 {
		return fmt.Errorf("routes: %v %s", err, r.Body)
	}
	return nil
}

// failover: each message's first route answers HTTP 500 (fall back), the
// second is the simulator; the figure is our own time between the end of
// the failing call's answer and the arrival of the next call (target at
// most 1 ms), beside the failing call itself. Messages go one at a time;
// every 4 messages a fresh failing account takes the first route, so its
// circuit breaker (open after 5 failures) never skips the call.
func (b *bench) failover(ctx context.Context) error {
	const accounts, perAccount = 40, 4
	fmt.Printf("# failover to the next route, %d messages one at a time on %s, GOMAXPROCS %d, %s\n", accounts*perAccount, b.db, runtime.GOMAXPROCS(0), time.Now().UTC().Format(time.RFC3339))
	var mu sync.Mutex
	var failStart, failEnd, okArrive time.Time
	var gaps, fails []time.Duration
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t := time.Now()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(`{"errorCode":"SystemError","errorMessage":"temporary outage"}`))
		w.(http.Flusher).Flush()
		mu.Lock()
		failStart, failEnd = t, time.Now()
		mu.Unlock()
	}))
	b.cleanups = append(b.cleanups, failing.Close)
	sim, _ := b.sim()
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		okArrive = time.Now()
		mu.Unlock()
		sim.ServeHTTP(w, r)
	}))
	b.cleanups = append(b.cleanups, ok.Close)
	api, url, err := b.freshAPI(ctx)
	if err != nil {
		return err
	}
	owner, key, err := apiKey(ctx, api, 4)
	if err != nil {
		return err
	}
	perMessage := map[string]string{"dispatch_batch_window_ms": "0", "dispatch_max_batch_size": "1", "dispatch_max_requests_per_second": "0"}
	cfg := func(u string) map[string]string {
		c := vendorB(u)
		for k, v := range perMessage {
			c[k] = v
		}
		return c
	}
	good, err := provider(ctx, owner, "vendorb_sms", cfg(ok.URL))
	if err != nil {
		return err
	}
	if _, err := b.daemon(ctx, url, "worker"); err != nil {
		return err
	}
	for a := 0; a < accounts; a++ {
		bad, err := provider(ctx, owner, "vendorb_sms", cfg(failing.URL))
		if err != nil {
			return err
		}
		if err := routes(ctx, owner, "sms", bad, good); err != nil {
			return err
		}
		for m := 0; m < perAccount; m++ {
			r, err := key.Signed(ctx, "POST", "/v1/notifications", sendBody(a*perAccount+m))
			if err != nil || r.Status != http.StatusCreated {
				return fmt.Errorf("send: %v %s", err, r.Body)
			}
			var acc struct {
				Data struct{ RequestID string } `json:"data"`
			}
			if err := r.Decode(&acc); err != nil {
				return err
			}
			if err := waitRequestSent(ctx, key, acc.Data.RequestID); err != nil {
				return err
			}
			mu.Lock()
			gaps, fails = append(gaps, okArrive.Sub(failEnd)), append(fails, failEnd.Sub(failStart))
			mu.Unlock()
		}
	}
	// The first message of the run also dials both vendors; keep it.
	sort.Slice(gaps, func(i, j int) bool { return gaps[i] < gaps[j] })
	sort.Slice(fails, func(i, j int) bool { return fails[i] < fails[j] })
	q := func(d []time.Duration, p float64) time.Duration { return d[int(p*float64(len(d)-1))] }
	fmt.Printf("%-44s p50 %s  p90 %s  p99 %s  max %s\n", "our time from failed answer to next call", q(gaps, .5), q(gaps, .9), q(gaps, .99), gaps[len(gaps)-1])
	fmt.Printf("%-44s p50 %s\n", "the failing vendor's own handling", q(fails, .5))
	fmt.Printf("%-44s %s (target <= 1ms)\n", "median failover overhead", q(gaps, .5))
	return nil
}

// waitRequestSent polls the status lookup until the request is sent.
func waitRequestSent(ctx context.Context, key *client.Client, id string) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		r, err := key.Signed(ctx, "GET", "/v1/notifications/"+id, nil)
		if err != nil {
			return err
		}
		var st struct {
			Data struct{ Status string } `json:"data"`
		}
		_ = r.Decode(&st)
		switch st.Data.Status {
		case "sent":
			return nil
		case "failed", "canceled":
			return fmt.Errorf("request %s ended %s: %s", id, st.Data.Status, r.Body)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return fmt.Errorf("request %s not sent in 30 s", id)
}
