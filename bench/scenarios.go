package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/notifyd/notifyd/client"
)

func header(what string, b *bench) {
	fmt.Printf("# %s on %s, %d connections, %s per phase, GOMAXPROCS %d, %s\n", what, b.db, b.conns, b.duration,
		runtime.GOMAXPROCS(0), time.Now().UTC().Format(time.RFC3339))
}

// apiKeyOnFreshDaemon starts an api-role daemon on a fresh database and
// returns a signing client for it with conns connections.
func (b *bench) apiKeyOnFreshDaemon(ctx context.Context, conns int) (*client.Client, error) {
	url, err := b.databaseURL()
	if err != nil {
		return nil, err
	}
	d, err := b.daemon(ctx, url, "api")
	if err != nil {
		return nil, err
	}
	_, key, err := apiKey(ctx, d, conns)
	if err != nil {
		return nil, err
	}
	key.HTTP = httpClient(conns)
	return key, nil
}

// bareSecret is the HMAC secret of the baseline handlers.
const bareSecret = "0123456789abcdef0123456789abcdef"

// bareBaseline runs the bare net/http + HMAC handler under the same load.
func (b *bench) bareBaseline() result {
	u, stop := bareServer(bareSecret)
	defer stop()
	c := client.New(u)
	c.HTTP, c.APIKey, c.HMACSecret = httpClient(b.conns), "k.s", bareSecret
	return run("baseline: bare net/http + HMAC handler", b.conns, b.duration, func(ctx context.Context, w int) error {
		return post(ctx, c, "POST", "/v1/notifications", sendBody(w), http.StatusCreated)
	})
}

// bareProcessBaseline runs the same bare handler in a process of its own
// (this binary with -scenario bareserve), as notifyd runs: in the load
// generator's process the handler shares one Go runtime with the client
// and pays no wakeups across processes, which favours it over any server.
func (b *bench) bareProcessBaseline(ctx context.Context) (result, error) {
	return b.childBaseline(ctx, "baseline: the same, in a process of its own", "bareserve")
}

// childBaseline runs the baseline server of scenario (with env) as a
// child process and drives it with the bare handler's load.
func (b *bench) childBaseline(ctx context.Context, name, scenario string, env ...string) (result, error) {
	u, stop, err := childServer(ctx, scenario, env...)
	if err != nil {
		return result{}, err
	}
	defer stop()
	c := client.New(u)
	c.HTTP, c.APIKey, c.HMACSecret = httpClient(b.conns), "k.s", bareSecret
	return run(name, b.conns, b.duration, func(ctx context.Context, w int) error {
		return post(ctx, c, "POST", "/v1/notifications", sendBody(w), http.StatusCreated)
	}), nil
}

// childServer runs this binary with -scenario scenario and env as a
// server of its own and returns the URL it prints first, and how to stop
// it.
func childServer(ctx context.Context, scenario string, env ...string) (string, func(), error) {
	self, err := os.Executable()
	if err != nil {
		return "", nil, err
	}
	cmd := exec.CommandContext(ctx, self, "-scenario", scenario)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		stop()
		return "", nil, fmt.Errorf("%s process: %w", scenario, err)
	}
	return strings.TrimSpace(line), stop, nil
}

// bareServe is the bareserve scenario: the bare handler alone, its URL on
// stdout, until the process is killed.
func bareServe() error {
	u, _ := bareServer(bareSecret)
	fmt.Println(u)
	select {}
}

// signed: authenticated requests on a trivial route (status lookup of an
// unknown id: full signature check, nonce write, one read, 404).
func (b *bench) signed(ctx context.Context) error {
	header("signed requests on a trivial authenticated route", b)
	key, err := b.apiKeyOnFreshDaemon(ctx, b.conns)
	if err != nil {
		return err
	}
	base := b.bareBaseline()
	fmt.Println(base)
	ours := run("notifyd: signed GET /v1/notifications/:id (404)", b.conns, b.duration, func(ctx context.Context, _ int) error {
		return post(ctx, key, "GET", "/v1/notifications/"+uuid.NewString(), nil, http.StatusNotFound)
	})
	fmt.Println(ours)
	ratio("signed / bare", ours.rate(), base.rate())
	return nil
}

// accept: durable acceptance of signed sends (201 after commit), with the
// api role so no worker competes for the CPU.
func (b *bench) accept(ctx context.Context) error {
	header("accepted signed POST /v1/notifications", b)
	key, err := b.apiKeyOnFreshDaemon(ctx, b.conns)
	if err != nil {
		return err
	}
	base := b.bareBaseline()
	fmt.Println(base)
	riv, err := b.riverInsertBaseline(ctx)
	if err != nil {
		return err
	}
	fmt.Println(riv)
	var seq atomic.Int64
	ours := run("notifyd: signed POST /v1/notifications (201)", b.conns, b.duration, func(ctx context.Context, _ int) error {
		return post(ctx, key, "POST", "/v1/notifications", sendBody(int(seq.Add(1))), http.StatusCreated)
	})
	fmt.Println(ours)
	ratio("accepted / bare handler (target >= 0.50)", ours.rate(), base.rate())
	ratio("accepted / River 1-tx inserts", ours.rate(), riv.rate())
	return nil
}

// bulk: bulk sends of 500 items against the batch baseline (rows/s).
func (b *bench) bulk(ctx context.Context) error {
	header("bulk send of 500 items", b)
	key, err := b.apiKeyOnFreshDaemon(ctx, 4)
	if err != nil {
		return err
	}
	base, err := b.riverBatchBaseline(ctx)
	if err != nil {
		return err
	}
	fmt.Println(base)
	body := bulkBody(500, 0)
	ours := run("notifyd: POST /v1/notifications/bulk x500, 4 conns", 4, b.duration, func(ctx context.Context, _ int) error {
		return post(ctx, key, "POST", "/v1/notifications/bulk", body, http.StatusCreated)
	})
	ours.ok *= 500
	fmt.Println(ours, "(counted per item)")
	ratio("bulk items / batch baseline (target >= 0.60)", ours.rate(), base.rate())
	return nil
}

func bulkBody(n, offset int) []byte {
	items := make([]json.RawMessage, n)
	for i := range items {
		items[i] = sendBody(offset + i)
	}
	out, _ := json.Marshal(map[string]any{"items": items})
	return out
}

// deliver: n requests accepted ahead, then a worker delivers them all
// through the simulator; against River working n empty jobs.
func (b *bench) deliver(ctx context.Context) error {
	header(fmt.Sprintf("end-to-end delivery of %d messages through the simulator", b.n), b)
	base, err := b.riverWorkBaseline(ctx, b.n)
	if err != nil {
		return err
	}
	fmt.Printf("%-44s %9.0f/s\n", "baseline: River tuned no-op work rate", base)
	_, simURL := b.sim()
	api, url, err := b.freshAPI(ctx)
	if err != nil {
		return err
	}
	owner, key, err := apiKey(ctx, api, 8)
	if err != nil {
		return err
	}
	if err := smsRoute(ctx, owner, simURL); err != nil {
		return err
	}
	for sent := 0; sent < b.n; sent += 500 {
		if err := post(ctx, key, "POST", "/v1/notifications/bulk", bulkBody(min(500, b.n-sent), sent), http.StatusCreated); err != nil {
			return err
		}
	}
	start := time.Now()
	if _, err := b.daemon(ctx, url, "worker"); err != nil {
		return err
	}
	if err := waitSent(ctx, api, b.n, start); err != nil {
		return err
	}
	rate := float64(b.n) / time.Since(start).Seconds()
	fmt.Printf("%-44s %9.0f/s  (%d in %s)\n", "notifyd: delivered through the simulator", rate, b.n, time.Since(start).Round(time.Millisecond))
	ratio("delivered / River no-op (target >= 0.40)", rate, base)
	return nil
}
