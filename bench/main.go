// Command bench measures notifyd against baselines taken in the same run
// (PERFORMANCE.md: machines are noisy, so every figure is a ratio).
//
//	go run ./bench -scenario serve|signed|accept|bulk|deliver|dispatchrate|batching|fanout|campaign|failover|steady|campaignserve|trackingserve|clickserve|lanes|chaos|recipients|recipientserve|inbox|workflowserve|receiptserve|workflowdelay -db sqlite|postgres [-duration 5s]
//
// With -db postgres the database is NOTIFYD_BENCH_DATABASE_URL (default
// postgres://postgres@127.0.0.1:5432/test); each run uses a fresh schema.
// The steady scenario instead starts its own PostgreSQL server (initdb,
// default settings) unless NOTIFYD_BENCH_DATABASE_URL is set; it runs 4
// connections for 5 minutes unless -conns or -duration is given. The
// chaos scenario (PostgreSQL only) runs 3 minutes, 100 sends a second on
// 6 connections, unless -duration, -rate or -conns is given.
//
// -scenario bareserve and durableserve are not run by hand: serve starts
// them as child processes for its baselines (the bare handler, and the
// durable minimum on BENCH_DURABLE_URL) and reads their URL from stdout.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"time"
)

func main() {
	scenario := flag.String("scenario", "accept", "serve | signed | accept | bulk | deliver | dispatchrate | batching | fanout | campaign | failover | steady | campaignserve | trackingserve | clickserve | lanes | chaos | recipients | recipientserve | inbox | workflowserve | receiptserve | workflowdelay")
	dbKind := flag.String("db", "sqlite", "sqlite | postgres")
	duration := flag.Duration("duration", 5*time.Second, "how long each load phase runs (steady: 5m, chaos: 3m unless given)")
	conns := flag.Int("conns", 64, "concurrent HTTP connections (steady: 4, chaos: 6, recipientserve: 16 unless given)")
	n := flag.Int("n", 20000, "messages for the deliver scenario; subscribers of fanout, campaign, campaignserve and trackingserve when above 20000 (else 100000)")
	role := flag.String("role", "all", "serve scenario: the role of notifyd serve (all or api)")
	rate := flag.Int("rate", 0, "chaos: signed sends a second (default 100); inbox: paced sends a second (default 1000); clickserve: clicks a second (default 5000); recipientserve: the paced phases' rate (default 60% of the slower A)")
	serverProfile := flag.String("serverprofile", "", "serve scenarios: write a CPU profile of the notifyd process to this file")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the run to this file")
	subscribers := flag.Int("subscribers", 0, "trackingserve: subscribers of the campaign (default 100000, or -n when above 20000)")
	rounds := flag.String("rounds", "off,on,off,on,on,off", "trackingserve: the rounds' tracking, in order (e.g. on for one tracked round to profile)")
	vacuum := flag.Bool("vacuum", true, "trackingserve on postgres: VACUUM ANALYZE and CHECKPOINT before each round, once the server is idle (-vacuum=false: autovacuum alone)")
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err == nil && pprof.StartCPUProfile(f) == nil {
			defer pprof.StopCPUProfile()
		}
	}
	ctx := context.Background()
	if *rate == 0 && *scenario != "clickserve" {
		*rate = 100
	}
	b := &bench{db: *dbKind, duration: *duration, conns: *conns, n: *n, role: *role, rate: *rate, serverProfile: *serverProfile,
		subscribers: *subscribers, rounds: *rounds, vacuum: *vacuum}
	defer b.cleanup()
	var err error
	switch *scenario {
	case "serve":
		err = b.serveLoad(ctx)
	case "signed":
		err = b.signed(ctx)
	case "accept":
		err = b.accept(ctx)
	case "bulk":
		err = b.bulk(ctx)
	case "deliver":
		err = b.deliver(ctx)
	case "batching":
		err = b.batching(ctx)
	case "dispatchrate":
		err = b.dispatchRate(ctx)
	case "fanout":
		err = b.fanout(ctx)
	case "campaign":
		err = b.campaign(ctx)
	case "failover":
		err = b.failover(ctx)
	case "steady":
		err = b.steady(ctx)
	case "lanes":
		err = b.lanes(ctx)
	case "recipients":
		err = b.recipients(ctx)
	case "workflowserve":
		err = b.workflowServe(ctx)
	case "receiptserve":
		err = b.receiptServe(ctx)
	case "workflowdelay":
		err = b.workflowDelay(ctx)
	case "inbox":
		err = b.inbox(ctx)
	case "recipientserve":
		err = b.recipientServe(ctx)
	case "campaignserve":
		err = b.campaignServe(ctx)
	case "trackingserve":
		err = b.trackingServe(ctx)
	case "clickserve":
		err = b.clickServe(ctx)
	case "chaos":
		err = b.chaos(ctx)
	case "bareserve": // the serve scenario's baselines, run as children
		err = bareServe()
	case "durableserve":
		err = durableServe()
	default:
		err = fmt.Errorf("unknown scenario %q", *scenario)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		b.cleanup()
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}
