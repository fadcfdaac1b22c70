package main

import (
	"context"
	"fmt"
	"time"
)

// The measuring order of the serve scenarios that compare two kinds of
// call (recipientserve, workflowserve). A warm-up of each kind (a phase
// each, not counted) runs first: on a fresh database the first phase ran
// up to 30% faster than the third, whatever its kind, which made the
// first pair's ratio a measurement of the phase's place. Then A B A B A:
// the fifth phase brackets each B between two A phases, so a drift over
// the run (tables growing) is taken out of the bracketed ratio
// B_i / mean(A_i, A_i+1). Each phase waits until the sink got every
// message it accepted before the next begins, and prints the CPU per
// message of the server and, on PostgreSQL, of the database's backends.

// abKind is one kind of call: its phase's name, its short name in the
// ratios ("by id"), and one call.
type abKind struct {
	name, short string
	op          func(ctx context.Context, worker int) error
}

// abRun compares kinds[1] (B) with kinds[0] (A) on a running serve.
type abRun struct {
	b     *bench
	p     *notifydProc
	sk    *sink
	dbc   *dbCPU
	kinds [2]abKind
}

// newABRun connects to the database's backends for their CPU and gives
// PostgreSQL the statistics its autovacuum gathers within a minute on a
// running service: the tables were filled seconds ago, and without them
// the planner took the dispatch's preference read (profiles by external
// id) as a scan of the workspace's preferences, 2-19 ms a call. The
// caller closes it.
func (b *bench) newABRun(ctx context.Context, p *notifydProc, sk *sink, dbURL string, kinds [2]abKind) (*abRun, error) {
	dbc, err := newDBCPU(ctx, b.db, dbURL)
	if err != nil {
		return nil, err
	}
	if err := dbc.analyze(ctx); err != nil {
		dbc.close()
		return nil, err
	}
	return &abRun{b: b, p: p, sk: sk, dbc: dbc, kinds: kinds}, nil
}

func (r *abRun) close() { r.dbc.close() }

// phase runs phase n of kind k (paced at rate a second, or as fast as the
// callers go with rate 0), waits until the sink got everything it
// accepted, and answers its result and CPU per message (server and
// database).
func (r *abRun) phase(n, k, rate int) (result, float64) {
	kind := r.kinds[k]
	before := int64(r.sk.unique())
	cpu0, db0 := r.p.cpu(), r.dbc.snapshot(context.Background())
	var res result
	if rate > 0 {
		res = runPaced(fmt.Sprintf("%s, paced at %d/s", kind.name, rate), r.b.conns, rate, r.b.duration, kind.op)
	} else {
		res = run(kind.name, r.b.conns, r.b.duration, kind.op)
	}
	r.p.drained(r.sk, n-1, before, res)
	srvCPU, dbCPU := r.p.cpu()-cpu0, cpuSince(db0, r.dbc.snapshot(context.Background()))
	perMsg := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(max(res.ok, 1)) }
	fmt.Printf("%-44s %9.0f µs  (server %.0f µs, database %.0f µs)\n", "CPU per message, accepted and delivered",
		perMsg(srvCPU+dbCPU), perMsg(srvCPU), perMsg(dbCPU))
	return res, float64(srvCPU+dbCPU) / float64(max(res.ok, 1))
}

// bracketed runs the warm-up A B, then A B A B A, and prints the ratios
// of B to A by rate and by CPU per message, each by pair and bracketed,
// and the p99s at saturation. It answers the rates of each kind.
func (r *abRun) bracketed() (rates [2][]float64) {
	for k, kind := range r.kinds {
		before := int64(r.sk.unique())
		res := run(fmt.Sprintf("warm-up %c (not counted)", 'A'+k), r.b.conns, r.b.duration, kind.op)
		r.p.drained(r.sk, -1, before, res)
	}
	var costs [2][]float64
	var p99s [2][]time.Duration
	for n, k := range []int{0, 1, 0, 1, 0} {
		res, cost := r.phase(n+1, k, 0)
		rates[k] = append(rates[k], res.rate())
		costs[k] = append(costs[k], cost)
		p99s[k] = append(p99s[k], res.pct(0.99))
	}
	label := r.kinds[1].short + " / " + r.kinds[0].short
	for i := range rates[1] {
		ratio(fmt.Sprintf("%s, pair %d", label, i+1), rates[1][i], rates[0][i])
	}
	// Each B between the A before it and the A after it: a drift over the
	// run counts for both kinds alike.
	for i := range rates[1] {
		ratio(fmt.Sprintf("%s, bracketed %d", label, i+1), rates[1][i], (rates[0][i]+rates[0][i+1])/2)
	}
	// The rate a CPU-bound machine would reach, from CPU per message: the
	// steadier figure when other work shares the machine.
	for i := range costs[1] {
		ratio(fmt.Sprintf("%s from CPU, pair %d", label, i+1), costs[0][i], costs[1][i])
	}
	for i := range costs[1] {
		ratio(fmt.Sprintf("%s from CPU, bracketed %d", label, i+1), (costs[0][i]+costs[0][i+1])/2, costs[1][i])
	}
	ms := func(d time.Duration) time.Duration { return d.Round(time.Millisecond / 10) }
	fmt.Printf("%-44s %v, %v (%s %v, %v, %v)\n", "p99 "+r.kinds[1].short+" at saturation", ms(p99s[1][0]), ms(p99s[1][1]),
		r.kinds[0].short, ms(p99s[0][0]), ms(p99s[0][1]), ms(p99s[0][2]))
	return rates
}
