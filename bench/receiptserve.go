package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/simulator"
)

// The receiptserve scenario is issue 35's ingestion benchmark: the
// default `notifyd serve` with a chata_webhook account pointed at the
// local sink (the sends measured) and a mailz_email (Postmark) account
// pointed at the simulator. Before the phases, 100,000 e-mails are sent
// through the bulk API and delivered to the simulator, so each has a
// pending delivery receipt. Then signed sends arrive from 16 connections
// (-conns) in four phases A B A B: A for b.duration with no report
// traffic; B for as long as 50,000 Postmark Delivery webhooks (the
// simulator's own bodies, basic-auth secret) take to be posted from
// reportConns connections to POST /v1/callbacks/{id} and applied (the
// callback answers once the receipt is settled): 100,000 reports over
// the two B phases (-n sets the reports of one B phase). Target: B accepts at
// least 0.8 of A's rate. The report rate is printed beside it, and every
// receipt must end delivered (GET /v1/metrics counts them).

const (
	receiptServeReports = 50000
	reportConns         = 8
)

func (b *bench) receiptServe(ctx context.Context) error {
	p, sk, err := b.serveWithSink(ctx, "default notifyd serve: signed sends while delivery reports are ingested (2 x 50,000 unless -n), A B A B")
	if err != nil {
		return err
	}
	defer sk.srv.Close()
	sim, simURL := b.sim()
	chat, err := provider(ctx, p.owner, "chata_webhook", map[string]string{"chata_webhook_url": sk.url})
	if err != nil {
		return err
	}
	mail, err := provider(ctx, p.owner, "mailz_email", map[string]string{"mailz_api_key": "pm-bench", "mailz_from_email": "from@example.com",
		"base_url": simURL, "dispatch_max_requests_per_second": "0", "dispatch_max_batch_size": "500", "dispatch_batch_window_ms": "50"})
	if err != nil {
		return err
	}
	r, err := p.owner.Dashboard(ctx, "PUT", "/v1/routes", map[string]any{"routes": []map[string]any{
		{"channel": "chata_webhook", "providerAccountId": chat, "priority": 1}, {"channel": "email", "providerAccountId": mail, "priority": 1}}})
	if err != nil || r.Status != http.StatusOK {
		return fmt.Errorf("routes: %v %s", err, r.Body)
	}
	var sec struct {
		Secret string `json:"secret"`
	}
	r, err = p.owner.Dashboard(ctx, "POST", "/v1/providers/"+mail+"/callback-secret/rotate", nil)
	if err != nil || r.Status != http.StatusOK || r.Decode(&sec) != nil {
		return fmt.Errorf("callback secret: %v %s", err, r.Body)
	}

	// The e-mails whose reports the B phases ingest (-n when given).
	perPhase := receiptServeReports
	if flagSet("n") {
		perPhase = b.n
	}
	total := 2 * perPhase
	t0 := time.Now()
	// In rounds of 10,000, each delivered before the next: a queue of
	// 100,000 jobs at once is another benchmark (campaignserve).
	for sent := 0; sent < total; sent += 10000 {
		n := min(10000, total-sent)
		if err := bulkEmails(ctx, p.key, sent, n); err != nil {
			return err
		}
		for len(sim.Messages("mailz_email", "", 0)) < sent+n && time.Since(t0) < 15*time.Minute {
			time.Sleep(200 * time.Millisecond)
		}
	}
	for {
		rc, err := receiptTotals(ctx, p.owner)
		if err != nil {
			return err
		}
		if rc["pending"] >= total {
			break
		}
		if time.Since(t0) > 15*time.Minute {
			return fmt.Errorf("only %d pending receipts of %d", rc["pending"], total)
		}
		time.Sleep(time.Second)
	}
	ms := sim.Messages("mailz_email", "", 0)
	fmt.Printf("%-44s %9d  (sent and receipts pending in %s)\n", "e-mails awaiting a report", len(ms), time.Since(t0).Round(time.Second))

	var seq atomic.Int64
	send := func(ctx context.Context, _ int) error {
		return post(ctx, p.key, "POST", "/v1/notifications", chatBody(seq.Add(1)), http.StatusCreated)
	}
	cb := httpClient(reportConns)
	// The database's CPU per send beside the server's: a report's cost is
	// on both sides of the connection.
	dbc, err := newDBCPU(ctx, b.db, p.dbURL)
	if err != nil {
		return err
	}
	defer dbc.close()
	var rates [2][]float64
	var ingest []float64
	for phase, reports := range []bool{false, true, false, true} {
		before := int64(sk.unique())
		cpu0, db0 := p.cpu(), dbc.snapshot(ctx)
		var res result
		if !reports {
			res = run("A: signed send, no report traffic", b.conns, b.duration, send)
		} else {
			batch := ms[:perPhase]
			ms = ms[perPhase:]
			rctx, stop := context.WithCancel(ctx)
			var rep reportResult
			done := make(chan struct{})
			go func() {
				rep = postReports(ctx, cb, sim, p.url+"/v1/callbacks/"+mail, sec.Secret, batch)
				stop()
				close(done)
			}()
			res = runUntil(rctx, fmt.Sprintf("B: signed send, %d reports ingested", perPhase), b.conns, send)
			<-done
			fmt.Printf("%-44s %9.0f/s  (%d in %s, failed %d)\n", "  delivery reports applied", rep.rate(), rep.ok, rep.elapsed.Round(time.Millisecond), rep.fail)
			if rep.err != nil {
				fmt.Printf("  first failure: %v\n", rep.err)
			}
			ingest = append(ingest, rep.rate())
		}
		p.drainedCPU(sk, phase, before, cpu0, res)
		if dbc != nil {
			fmt.Printf("%-44s %9.0f µs\n", "database CPU per message", float64(cpuSince(db0, dbc.snapshot(ctx)).Microseconds())/float64(max(res.ok, 1)))
		}
		k := 0
		if reports {
			k = 1
		}
		rates[k] = append(rates[k], res.rate())
	}
	for i := range rates[0] {
		ratio(fmt.Sprintf("sends during reports / without, pair %d", i+1), rates[1][i], rates[0][i])
	}
	for i, r := range ingest {
		fmt.Printf("%-44s %9.0f/s\n", fmt.Sprintf("reports applied, B phase %d", i+1), r)
	}
	rc, err := receiptTotals(ctx, p.owner)
	if err != nil {
		return err
	}
	fmt.Printf("%-44s %9d  (pending %d, undelivered %d, unknown %d; want %d delivered)\n", "receipts delivered (GET /v1/metrics)",
		rc["delivered"], rc["pending"], rc["undelivered"], rc["unknown"], total)
	fmt.Printf("%-44s %9d\n", "duplicates (a text that arrived twice)", sk.dups.Load())
	if rc["delivered"] != total {
		return fmt.Errorf("%d receipts delivered, want %d", rc["delivered"], total)
	}
	return nil
}

// bulkEmails sends n e-mails, numbered from offset, through POST
// /v1/notifications/bulk, 500 a call from 4 connections.
func bulkEmails(ctx context.Context, key *client.Client, offset, n int) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				from := int(next.Add(500)) - 500
				if from >= n {
					return
				}
				items := make([]map[string]any, 0, 500)
				for i := from; i < min(n, from+500); i++ {
					items = append(items, map[string]any{"channel": "email",
						"recipient": map[string]any{"address": fmt.Sprintf("user%06d@example.com", offset+i)},
						"content":   map[string]any{"title": "Your receipt", "text": fmt.Sprintf("Order %d shipped.", i)}})
				}
				if err := post(ctx, key, "POST", "/v1/notifications/bulk", mustJSON(map[string]any{"items": items}), http.StatusCreated); err != nil {
					errs <- fmt.Errorf("bulk e-mails: %w", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// receiptTotals reads the workspace's receipt counts of the last day
// from GET /v1/metrics.
func receiptTotals(ctx context.Context, owner *client.Client) (map[string]int, error) {
	from := url.QueryEscape(time.Now().Add(-24 * time.Hour).UTC().Format(time.RFC3339Nano))
	r, err := owner.Dashboard(ctx, "GET", "/v1/metrics?from="+from, nil)
	if err != nil || r.Status != http.StatusOK {
		return nil, fmt.Errorf("metrics: %v %s", err, r.Body)
	}
	var m struct {
		Receipts struct {
			Total map[string]float64 `json:"total"`
		} `json:"receipts"`
	}
	if err := r.Decode(&m); err != nil {
		return nil, err
	}
	out := map[string]int{}
	for k, v := range m.Receipts.Total {
		out[k] = int(v)
	}
	return out, nil
}

type reportResult struct {
	ok, fail int64
	elapsed  time.Duration
	err      error
}

func (r reportResult) rate() float64 { return float64(r.ok) / r.elapsed.Seconds() }

// postReports posts a Postmark Delivery webhook for each message of ms
// to callback from reportConns connections.
func postReports(ctx context.Context, c *http.Client, sim *simulator.Simulator, callback, secret string, ms []simulator.Message) reportResult {
	var next, ok, fail atomic.Int64
	var first atomic.Value
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < reportConns; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(ms) || ctx.Err() != nil {
					return
				}
				if err := postReport(ctx, c, sim, callback, secret, ms[i]); err != nil {
					fail.Add(1)
					first.CompareAndSwap(nil, err)
					continue
				}
				ok.Add(1)
			}
		}()
	}
	wg.Wait()
	res := reportResult{ok: ok.Load(), fail: fail.Load(), elapsed: time.Since(start)}
	if err, _ := first.Load().(error); err != nil {
		res.err = err
	}
	return res
}

func postReport(ctx context.Context, c *http.Client, sim *simulator.Simulator, callback, secret string, m simulator.Message) error {
	body, h, err := sim.CallbackBody(simulator.CallbackRequest{Kind: "mailz_email", URL: callback, Secret: secret, Type: "delivery",
		To: m.To, MessageID: m.ID})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, "POST", callback, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header = h
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("callback: %d %s", resp.StatusCode, out)
	}
	var res struct{ Events int }
	return json.Unmarshal(out, &res)
}
