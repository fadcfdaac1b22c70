package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync/atomic"
	"time"
)

// The recipientserve scenario is issue 32's serve target: the default
// `notifyd serve`, one chata_bot account pointed at the local sink, and
// 10,000 recipient profiles each with a chat target. Signed sends arrive
// from 16 connections (-conns) for b.duration per phase while delivery
// runs (a p99 measured at 64 connections is the queue of 64 callers, not
// the cost of a send),
// in phases A B A B A: A names the target in recipient.address, B names
// the profile in recipient.id and the category "updates" (its address
// read at acceptance; preferences decided at acceptance and again at
// dispatch, the workspace's send window, open all day, evaluated; 200 of
// the profiles hold preferences of their own, all allowing chata_bot). Each phase
// waits until the sink got every message it accepted before the next
// begins. A warm-up of each kind (a phase each, not counted) runs first:
// on a fresh database the first phase ran up to 30% faster than the
// third, whatever its kind, which made the first pair's ratio a
// measurement of the phase's place. The fifth phase (A) brackets each B
// between two A phases, so a drift over the run (tables growing) is
// taken out of the bracketed ratio: B_i / mean(A_i, A_i+1). Then A B A B
// again, paced at -rate a second (default 60% of the slowest A): the
// latency of a send at a load the server carries.
// Target: B accepts at least 0.9 of A's rate, p99 at most 50 ms.

const recipientServeProfiles = 10000

func (b *bench) recipientServe(ctx context.Context) error {
	if !flagSet("conns") {
		b.conns = 16
	}
	header("default notifyd serve: sends by recipient id against sends by address, warm-up A B, then A B A B A", b)
	p, sk, dbURL, err := b.chatServe(ctx, recipientServeProfiles, func(n int, item map[string]any) {
		item["name"], item["timeZone"], item["locale"] = fmt.Sprintf("Person %d", n), "Asia/Seoul", "ko-KR"
	})
	if err != nil {
		return err
	}
	defer sk.srv.Close()
	if r, err := p.owner.Dashboard(ctx, "POST", "/v1/categories", map[string]any{"key": "updates", "name": "Updates"}); err != nil || r.Status != http.StatusCreated {
		return fmt.Errorf("category: %v %s", err, r.Body)
	}
	if r, err := p.owner.Dashboard(ctx, "PUT", "/v1/send-windows/workspace", map[string]any{"hours": "00:00-00:00", "timeZone": "Asia/Seoul"}); err != nil || r.Status != http.StatusOK {
		return fmt.Errorf("send window: %v %s", err, r.Body)
	}
	for n := 0; n < recipientServeProfiles; n += recipientServeProfiles / 200 {
		body := map[string]any{"channels": map[string]bool{"email": false}, "categories": map[string]any{"updates": map[string]bool{"chata_bot": true}}}
		if r, err := p.owner.Dashboard(ctx, "PUT", fmt.Sprintf("/v1/recipients/user-%05d/preferences", n), body); err != nil || r.Status != http.StatusOK {
			return fmt.Errorf("preferences: %v %s", err, r.Body)
		}
	}
	var seq atomic.Int64
	body := func(byID bool) []byte {
		i := seq.Add(1)
		n := i % recipientServeProfiles
		send := map[string]any{"channel": "chata_bot", "recipient": map[string]any{"address": fmt.Sprintf("C%05d", n)},
			"content": map[string]any{"text": chatText(i)}}
		if byID {
			send["recipient"], send["category"] = map[string]any{"id": fmt.Sprintf("user-%05d", n)}, "updates"
		}
		out, _ := json.Marshal(send)
		return out
	}
	dbc, err := newDBCPU(ctx, b.db, dbURL)
	if err != nil {
		return err
	}
	defer dbc.close()
	// The tables were filled seconds ago: give PostgreSQL the statistics
	// its autovacuum gathers within a minute on a running service. Without
	// them the planner took the dispatch's preference read (profiles by
	// external id) as a scan of the workspace's preferences, 2-19 ms a call.
	if err := dbc.analyze(ctx); err != nil {
		return err
	}
	// phase runs one load phase (paced at rate a second, or as fast as the
	// callers go with rate 0), waits until the sink got everything it
	// accepted, and answers its result and CPU per message.
	phase := func(n int, byID bool, rate int) (result, float64) {
		name := "A: signed send by recipient.address"
		if byID {
			name = "B: signed send by recipient.id + category"
		}
		op := func(ctx context.Context, _ int) error {
			return post(ctx, p.key, "POST", "/v1/notifications", body(byID), http.StatusCreated)
		}
		before := int64(sk.unique())
		cpu0, db0 := p.cpu(), dbc.snapshot(ctx)
		var res result
		if rate > 0 {
			res = runPaced(fmt.Sprintf("%s, paced at %d/s", name, rate), b.conns, rate, b.duration, op)
		} else {
			res = run(name, b.conns, b.duration, op)
		}
		p.drained(sk, n-1, before, res)
		srvCPU, dbCPU := p.cpu()-cpu0, cpuSince(db0, dbc.snapshot(ctx))
		perMsg := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(max(res.ok, 1)) }
		fmt.Printf("%-44s %9.0f µs  (server %.0f µs, database %.0f µs)\n", "CPU per message, accepted and delivered",
			perMsg(srvCPU+dbCPU), perMsg(srvCPU), perMsg(dbCPU))
		return res, float64(srvCPU+dbCPU) / float64(max(res.ok, 1))
	}
	// Same connections, same client, same text sizes for both kinds; a B
	// body is longer by the category and the id's name.
	fmt.Printf("%-44s %9d bytes (B %d bytes)\n", "body of a send, A", len(body(false)), len(body(true)))
	warm := b.duration
	for _, byID := range []bool{false, true} {
		name := "warm-up A (not counted)"
		if byID {
			name = "warm-up B (not counted)"
		}
		before := int64(sk.unique())
		res := run(name, b.conns, warm, func(ctx context.Context, _ int) error {
			return post(ctx, p.key, "POST", "/v1/notifications", body(byID), http.StatusCreated)
		})
		p.drained(sk, -1, before, res)
	}
	var rates, costs [2][]float64
	var p99s [2][]time.Duration
	for n, byID := range []bool{false, true, false, true, false} {
		res, cost := phase(n+1, byID, 0)
		k := 0
		if byID {
			k = 1
		}
		rates[k] = append(rates[k], res.rate())
		costs[k] = append(costs[k], cost)
		p99s[k] = append(p99s[k], res.pct(0.99))
	}
	for i := range rates[1] {
		ratio(fmt.Sprintf("by id / by address, pair %d", i+1), rates[1][i], rates[0][i])
	}
	// Each B between the A before it and the A after it: a drift over the
	// run counts for both kinds alike.
	for i := range rates[1] {
		ratio(fmt.Sprintf("by id / by address, bracketed %d", i+1), rates[1][i], (rates[0][i]+rates[0][i+1])/2)
	}
	// The rate a CPU-bound machine would reach, from CPU per message: the
	// steadier figure when other work shares the machine.
	for i := range costs[1] {
		ratio(fmt.Sprintf("by id / by address from CPU, pair %d", i+1), costs[0][i], costs[1][i])
	}
	for i := range costs[1] {
		ratio(fmt.Sprintf("by id / by address from CPU, bracketed %d", i+1), (costs[0][i]+costs[0][i+1])/2, costs[1][i])
	}
	fmt.Printf("%-44s %v, %v (by address %v, %v, %v)\n", "p99 by id at saturation", p99s[1][0].Round(time.Millisecond/10), p99s[1][1].Round(time.Millisecond/10),
		p99s[0][0].Round(time.Millisecond/10), p99s[0][1].Round(time.Millisecond/10), p99s[0][2].Round(time.Millisecond/10))
	// At saturation a p99 is mostly the wait of 16 callers in line. The
	// latency a send has at a load the server carries: both kinds paced at
	// -rate a second (default: 60% of the slowest A phase), A B A B again.
	paced := b.rate
	if !flagSet("rate") {
		paced = int(0.6*slices.Min(rates[0])) / 10 * 10
	}
	var pacedP99 [2][]time.Duration
	for n, byID := range []bool{false, true, false, true} {
		res, _ := phase(n+6, byID, paced)
		k := 0
		if byID {
			k = 1
		}
		pacedP99[k] = append(pacedP99[k], res.pct(0.99))
	}
	fmt.Printf("%-44s %v, %v (by address %v, %v)\n", fmt.Sprintf("p99 by id paced at %d/s", paced),
		pacedP99[1][0].Round(time.Millisecond/10), pacedP99[1][1].Round(time.Millisecond/10),
		pacedP99[0][0].Round(time.Millisecond/10), pacedP99[0][1].Round(time.Millisecond/10))
	fmt.Printf("%-44s %9d\n", "duplicates (a text that arrived twice)", sk.dups.Load())
	return nil
}
