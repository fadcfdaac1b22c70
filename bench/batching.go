package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"maps"
	"net/http"
	"os"
	"sort"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/daemon"
	"github.com/notifyd/notifyd/internal/delivery/pacing"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider/kinds"
	"github.com/notifyd/notifyd/internal/simulator"
	"github.com/notifyd/notifyd/internal/store/sqlstore"
)

// batchKind is one provider kind of the batching scenario: its channel,
// config against the simulator and a recipient per message.
type batchKind struct {
	kind, channel string
	// label names a row that overrides the defaults (extra configJson).
	label string
	extra map[string]string
	// workers is the number of worker processes (0: one).
	workers int
	config  func(simURL string) map[string]string
	to      func(i int) string
}

func batchKinds() []batchKind {
	phone := func(i int) string { return fmt.Sprintf("010%08d", i) }
	email := func(i int) string { return fmt.Sprintf("user%d@example.com", i) }
	return []batchKind{
		{kind: "vendora_sms", channel: "sms", config: func(u string) map[string]string {
			return map[string]string{"vendora_user_id": "u", "vendora_api_key": "k", "vendora_sender": "0212345678", "base_url": u}
		}, to: phone},
		{kind: "vendorb_sms", channel: "sms", config: vendorB, to: phone},
		{kind: "push_gateway", channel: "push_mobile", config: func(u string) map[string]string {
			return map[string]string{"push_service_account_json": serviceAccount(u + "/token"), "base_url": u}
		}, to: func(i int) string { return fmt.Sprintf("device-token-%d", i) }},
		{kind: "mailx_email", channel: "email", config: func(u string) map[string]string {
			return map[string]string{"mailx_api_key": "re_bench", "mailx_from_email": "from@example.com", "base_url": u}
		}, to: email},
		{kind: "mailz_email", channel: "email", config: func(u string) map[string]string {
			return map[string]string{"mailz_api_key": "pm-bench", "mailz_from_email": "from@example.com", "base_url": u}
		}, to: email},
		{kind: "maily_email", channel: "email", config: func(u string) map[string]string {
			return map[string]string{"maily_access_key_id": "AKIABENCH", "maily_secret_access_key": "secret", "maily_region": "us-east-1",
				"maily_from_email": "from@example.com", "base_url": u}
		}, to: email},
		// The 20 calls/s cap binds only when batches stay small: batches
		// of 5 need more calls than the cap allows at these rates.
		{kind: "vendorb_sms", channel: "sms", config: vendorB, to: phone, label: "vendorb max5",
			extra: map[string]string{"dispatch_max_batch_size": "5"}},
	}
}

// withCallShare adds, on PostgreSQL, the capped vendorB row with two
// worker processes: they share the account's 20 calls/s by heartbeat
// (dispatch/callshare.go). BENCH_WORKERS=2 runs that row alone.
func withCallShare(b *bench, ks []batchKind) []batchKind {
	if b.db != "postgres" {
		return ks
	}
	row := batchKind{kind: "vendorb_sms", channel: "sms", config: vendorB, to: ks[1].to, label: "vendorb5 2wkr",
		extra: map[string]string{"dispatch_max_batch_size": "5"}, workers: 2}
	if os.Getenv("BENCH_WORKERS") == "2" {
		return []batchKind{row}
	}
	return append(ks, row)
}

func vendorB(u string) map[string]string {
	return map[string]string{"vendorb_api_key": "k", "vendorb_api_secret": "s", "vendorb_sender": "0212345678", "base_url": u}
}

// serviceAccount is a push_gateway service account whose token endpoint
// is the simulator's (which does not verify the signature).
func serviceAccount(tokenURI string) string {
	k, _ := rsa.GenerateKey(rand.Reader, 2048)
	der, _ := x509.MarshalPKCS8PrivateKey(k)
	b, _ := json.Marshal(map[string]string{"type": "service_account", "project_id": "bench", "private_key_id": "k1",
		"private_key":  string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email": "bench@bench.iam.gserviceaccount.com", "token_uri": tokenURI})
	return string(b)
}

// batching: for each kind at its default batching, n/10 notifications are
// queued ahead, then one worker delivers them through the simulator; the
// batch sizes and the vendor calls per second are set against the kind's
// allowed calls per second.
func (b *bench) batching(ctx context.Context) error {
	n := max(b.n/10, 100)
	header(fmt.Sprintf("adapter batching at each kind's defaults, %d messages per kind", n), b)
	fmt.Printf("%-13s %22s %7s %6s %6s %5s %6s %7s %7s %9s %9s %8s\n", "kind", "defaults (cps/wait/max)", "msgs/s",
		"time", "flush", "full", "window", "mean", "max", "calls", "calls/s", "peak/1s")
	reg := kinds.All()
	for _, k := range withCallShare(b, batchKinds()) {
		def, label := reg[k.kind].Batch, cmp.Or(k.label, k.kind)
		if k.extra != nil {
			def.MaxSize, _ = strconv.Atoi(k.extra["dispatch_max_batch_size"])
		}
		r, err := b.batchRun(ctx, k, n)
		if err != nil {
			return fmt.Errorf("%s: %w", k.kind, err)
		}
		cps := "none"
		if def.CallsPerSecond > 0 {
			cps = fmt.Sprint(def.CallsPerSecond)
		}
		fmt.Printf("%-13s %22s %7.0f %6s %6d %5d %6d %7.1f %7d %9d %9.2f %8d\n", label,
			fmt.Sprintf("%s/%dms/%d", cps, def.Window.Milliseconds(), max(def.MaxSize, 1)), float64(n)/r.took.Seconds(),
			r.took.Round(100*time.Millisecond), r.flushes, r.full, r.window, float64(n)/float64(max(r.flushes, 1)), r.maxBatch,
			r.calls, r.callsPerSec, r.peak)
		if k.workers > 1 {
			fmt.Printf("%-13s %d worker processes; calls in each second: %v; peak/1s after the first 3 s: %d\n", "", k.workers, r.perSecond, r.steadyPeak)
		}
	}
	fmt.Println("flush = batches (vendor calls for all kinds but push_gateway, whose batch is one request per message);")
	fmt.Println("calls = HTTP calls the simulator accepted; calls/s = batches per second from first to last batch;")
	fmt.Println("peak/1s = most batches that started within any one second (push_gateway: not measured)")
	return nil
}

type batchResult struct {
	took                         time.Duration
	flushes, full, window, calls int
	maxBatch, peak               int
	perSecond                    []int // calls started in each second (first call = 0)
	steadyPeak                   int   // peak/1s leaving out the first 3 s (start-up)
	callsPerSec                  float64
}

func (b *bench) batchRun(ctx context.Context, k batchKind, n int) (batchResult, error) {
	var res batchResult
	defer b.cleanup()
	sim, simURL := b.sim()
	url, err := b.databaseURL()
	if err != nil {
		return res, err
	}
	api, err := b.daemon(ctx, url, "api")
	if err != nil {
		return res, err
	}
	owner, key, err := apiKey(ctx, api, 8)
	if err != nil {
		return res, err
	}
	cfg := k.config(simURL)
	maps.Copy(cfg, k.extra)
	if err := route(ctx, owner, k.kind, k.channel, cfg); err != nil {
		return res, err
	}
	for sent := 0; sent < n; sent += 500 {
		items := make([]map[string]any, min(500, n-sent))
		for i := range items {
			items[i] = map[string]any{"channel": k.channel, "recipient": map[string]any{"address": k.to(sent + i)},
				"content": map[string]any{"title": "Batch", "text": fmt.Sprintf("Message %d of the batching benchmark.", sent+i)}}
		}
		if err := post(ctx, key, "POST", "/v1/notifications/bulk", mustJSON(map[string]any{"items": items}), http.StatusCreated); err != nil {
			return res, err
		}
	}
	start := time.Now()
	var workers []*daemon.Daemon
	for range max(k.workers, 1) {
		worker, err := b.daemon(ctx, url, "worker")
		if err != nil {
			return res, err
		}
		workers = append(workers, worker)
	}
	if err := waitSent(ctx, api, n, start); err != nil {
		return res, err
	}
	res.took = time.Since(start)
	for _, worker := range workers {
		for _, reason := range []string{pacing.FlushFull, pacing.FlushWindow} {
			c := int(counter(worker.Metrics.Batch.Flushes.WithLabelValues(k.kind, reason)))
			res.flushes += c
			if reason == pacing.FlushFull {
				res.full += c
			} else {
				res.window += c
			}
		}
		res.calls += int(counter(worker.Metrics.Batch.Calls.WithLabelValues(k.kind)))
	}
	batchStats(sim, k.kind, &res)
	return res, nil
}

// batchStats reads the simulator's calls: the largest batch, the batch
// rate and its peak in any one second. push_gateway records one call per
// message, so only the flush counts describe its batches.
func batchStats(sim *simulator.Simulator, kind string, res *batchResult) {
	calls := map[uint64][]time.Time{}
	for _, m := range sim.Messages(kind, "", 0) {
		calls[m.Call] = append(calls[m.Call], m.ReceivedAt)
	}
	if kind == "push_gateway" {
		res.maxBatch = -1
		if res.took > 0 {
			res.callsPerSec = float64(res.flushes) / res.took.Seconds()
		}
		return
	}
	var at []time.Time
	for _, ts := range calls {
		res.maxBatch = max(res.maxBatch, len(ts))
		at = append(at, ts[0])
	}
	sort.Slice(at, func(i, j int) bool { return at[i].Before(at[j]) })
	if len(at) > 1 {
		res.callsPerSec = float64(len(at)-1) / at[len(at)-1].Sub(at[0]).Seconds()
	}
	for i, j := 0, 0; i < len(at); i++ {
		for at[i].Sub(at[j]) >= time.Second {
			j++
		}
		res.peak = max(res.peak, i-j+1)
		if at[j].Sub(at[0]) >= 3*time.Second {
			res.steadyPeak = max(res.steadyPeak, i-j+1)
		}
		sec := int(at[i].Sub(at[0]) / time.Second)
		for len(res.perSecond) <= sec {
			res.perSecond = append(res.perSecond, 0)
		}
		res.perSecond[sec]++
	}
}

// route registers a provider of kind with configJson cfg and routes channel to it.
func route(ctx context.Context, owner *client.Client, kind, channel string, cfg map[string]string) error {
	id, err := provider(ctx, owner, kind, cfg)
	if err != nil {
		return err
	}
	return routes(ctx, owner, channel, id)
}

// waitSent waits until n requests are sent (or any failed).
func waitSent(ctx context.Context, api *daemon.Daemon, n int, start time.Time) error {
	for {
		var sent, failed int
		err := api.DB.View(ctx, func(tx notify.Tx) error {
			return tx.(*sqlstore.Tx).Conn().QueryRow(ctx, `SELECT COUNT(*) FILTER (WHERE status = 'sent'), COUNT(*) FILTER (WHERE status = 'failed') FROM notification_requests`).Scan(&sent, &failed)
		})
		if err != nil {
			return err
		}
		if failed > 0 {
			return fmt.Errorf("%d requests failed", failed)
		}
		if sent >= n {
			return nil
		}
		if time.Since(start) > 15*time.Minute {
			return fmt.Errorf("only %d of %d sent", sent, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// counter reads a counter's value.
func counter(c prometheus.Counter) float64 {
	var m dto.Metric
	if c.Write(&m) != nil {
		return 0
	}
	return m.GetCounter().GetValue()
}
