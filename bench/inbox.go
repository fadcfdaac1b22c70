package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The inbox scenario is issue 33's benchmark. The default `notifyd serve`
// and 10,000 recipient profiles, each with one open Server-Sent Events
// stream (-n sets the count):
//  1. the memory of the process holding the streams, idle and with every
//     stream open (VmRSS; target: under 150 MB above idle);
//  2. one event delivered to every stream: a bulk `inapp` send to all
//     the profiles, timed until each stream has its message;
//  3. latency from acceptance (the 201) to the message on the stream,
//     under signed `inapp` sends at -rate a second (default 1,000) for
//     -duration, each to a profile whose stream is open (target: p99 at
//     most 100 ms on the same process).
// On PostgreSQL it then repeats 1 and 3 with the streams held by a second
// process (`serve --role api`) while the first accepts and delivers, so
// each event crosses processes through LISTEN/NOTIFY (target: p99 at most
// 250 ms).

func (b *bench) inbox(ctx context.Context) error {
	if !flagSet("conns") {
		b.conns = 32
	}
	if !flagSet("rate") {
		b.rate = 1000
	}
	streams := 10000
	if flagSet("n") {
		streams = b.n
	}
	header("in-app inbox: open streams, memory, send-to-stream latency", b)
	dbURL, err := b.databaseURL()
	if err != nil {
		return err
	}
	p, err := b.startServe(ctx, dbURL, "all", b.conns)
	if err != nil {
		return err
	}
	for c := 0; c < streams; c += 1000 {
		items := make([]map[string]any, 0, 1000)
		for n := c; n < min(c+1000, streams); n++ {
			items = append(items, map[string]any{"externalId": inboxUser(n), "name": fmt.Sprintf("Person %d", n)})
		}
		r, err := p.owner.Dashboard(ctx, "POST", "/v1/recipients/bulk", map[string]any{"items": items})
		if err != nil || r.Status != http.StatusOK {
			return fmt.Errorf("profiles: %v %s", err, r.Body)
		}
	}
	tokens := make([]string, streams)
	if err := parallel(16, streams, func(n int) error {
		r, err := p.owner.Dashboard(ctx, "POST", "/v1/recipients/"+inboxUser(n)+"/inbox-token", map[string]any{"ttlSeconds": 86400})
		if err != nil || r.Status != http.StatusOK {
			return fmt.Errorf("token: %v %s", err, r.Body)
		}
		var out struct {
			Token string `json:"token"` // the Dashboard API answers without an envelope
		}
		if err := json.Unmarshal(r.Body, &out); err != nil {
			return err
		}
		tokens[n] = out.Token
		return nil
	}); err != nil {
		return err
	}
	if err := b.inboxRound(ctx, "same process", p, p, tokens); err != nil {
		return err
	}
	if b.db != "postgres" {
		return nil
	}
	q, err := b.another(p, "api")
	if err != nil {
		return err
	}
	return b.inboxRound(ctx, "across processes (streams on a second api process)", p, q, tokens)
}

func inboxUser(n int) string { return fmt.Sprintf("inbox-user-%05d", n) }

// inboxRound opens a stream per token on holder, measures its memory,
// broadcasts one message to all, then runs the latency load through
// sender.
func (b *bench) inboxRound(ctx context.Context, name string, sender, holder *notifydProc, tokens []string) error {
	fmt.Printf("\n-- %s\n", name)
	time.Sleep(2 * time.Second) // let the setup's garbage be collected
	idle := procRSS(holder.cmd.Process.Pid)
	fmt.Printf("%-44s %9.1f MB\n", "RSS of the stream holder, idle", float64(idle)/1024)
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	o := &streamObserver{}
	t0 := time.Now()
	if err := o.open(sctx, holder.url, tokens); err != nil {
		return err
	}
	fmt.Printf("%-44s %9d  (in %s)\n", "streams open", len(tokens), time.Since(t0).Round(time.Millisecond))
	time.Sleep(2 * time.Second)
	open := procRSS(holder.cmd.Process.Pid)
	fmt.Printf("%-44s %9.1f MB  (%.1f MB above idle, %.1f KB a stream)\n", "RSS of the stream holder, streams open",
		float64(open)/1024, float64(open-idle)/1024, float64(open-idle)/float64(len(tokens)))
	fmt.Printf("%-44s %s\n", "of which", goMemory(holder.url))

	// One event to every stream: a bulk send to all the profiles.
	t0 = time.Now()
	o.broadcast.Store(0)
	for c := 0; c < len(tokens); c += 500 {
		items := make([]map[string]any, 0, 500)
		for n := c; n < min(c+500, len(tokens)); n++ {
			items = append(items, map[string]any{"channel": "inapp", "recipient": map[string]any{"id": inboxUser(n)},
				"content": map[string]any{"title": "all", "text": "one event for every stream"}})
		}
		body, _ := json.Marshal(map[string]any{"items": items})
		if err := post(ctx, sender.key, "POST", "/v1/notifications/bulk", body, http.StatusCreated); err != nil {
			return fmt.Errorf("broadcast: %w", err)
		}
	}
	accepted := time.Since(t0)
	for o.broadcast.Load() < int64(len(tokens)) && time.Since(t0) < 2*time.Minute {
		time.Sleep(5 * time.Millisecond)
	}
	fmt.Printf("%-44s %9d of %d  (all accepted in %s, all on their streams in %s)\n", "broadcast: streams that got it",
		o.broadcast.Load(), len(tokens), accepted.Round(time.Millisecond), time.Since(t0).Round(time.Millisecond))

	// Latency under load: sends at b.rate a second, paced, each to one
	// profile with an open stream; title n ties the arrival to the send.
	total := int(b.rate * int(b.duration.Seconds()))
	acceptedAt := make([]atomic.Int64, total)
	postedAt := make([]atomic.Int64, total) // when the send left the client
	o.reset(total)
	interval := time.Duration(float64(time.Second) * float64(b.conns) / float64(b.rate))
	var ok, fail atomic.Int64
	start := time.Now()
	if err := parallel(b.conns, b.conns, func(w int) error {
		// Worker w's k-th send leaves at start + k·interval + w·interval/conns.
		for k := 0; ; k++ {
			i := k*b.conns + w
			if i >= total {
				return nil
			}
			time.Sleep(time.Until(start.Add(time.Duration(k)*interval + time.Duration(w)*interval/time.Duration(b.conns))))
			n := i % len(tokens)
			body, _ := json.Marshal(map[string]any{"channel": "inapp", "recipient": map[string]any{"id": inboxUser(n)},
				"content": map[string]any{"title": strconv.Itoa(i), "text": "latency probe"}})
			postedAt[i].Store(time.Now().UnixNano())
			if err := post(ctx, sender.key, "POST", "/v1/notifications", body, http.StatusCreated); err != nil {
				fail.Add(1)
				continue
			}
			acceptedAt[i].Store(time.Now().UnixNano())
			ok.Add(1)
		}
	}); err != nil {
		return err
	}
	elapsed := time.Since(start)
	fmt.Printf("%-44s %9d in %s (%.0f/s), %d failed\n", fmt.Sprintf("inapp sends paced at %d/s", b.rate), ok.Load(),
		elapsed.Round(time.Millisecond), float64(ok.Load())/elapsed.Seconds(), fail.Load())
	wait := time.Now()
	for o.probes.Load() < ok.Load() && time.Since(wait) < 30*time.Second {
		time.Sleep(5 * time.Millisecond)
	}
	// The whole way, and its two legs: acceptance to the delivery's
	// settlement (the message's createdAt, in milliseconds), and from
	// there to the stream (the commit, the wake-up, the read, the write).
	// An event may reach its stream before the 201 reaches the client
	// (the stream is woken at the commit, the answer leaves after it): the
	// way from the send's request is the bound that never reads 0.
	var lat, fromPost, toStore, toStream []time.Duration
	for i := 0; i < total; i++ {
		a, got, st := acceptedAt[i].Load(), o.arrived[i].Load(), o.stored[i].Load()
		if a != 0 && got != 0 {
			lat = append(lat, time.Duration(max(got-a, 0)))
			fromPost = append(fromPost, time.Duration(max(got-postedAt[i].Load(), 0)))
			toStore = append(toStore, time.Duration(max(st-a, 0)))
			toStream = append(toStream, time.Duration(max(got-st, 0)))
		}
	}
	fmt.Printf("%-44s %9d of %d accepted\n", "probes on their streams", len(lat), ok.Load())
	fmt.Printf("%-44s %s\n", "acceptance (the 201) to stream", percentiles(lat))
	fmt.Printf("%-44s %s\n", "send's request to stream", percentiles(fromPost))
	fmt.Printf("%-44s %s\n", "  acceptance to stored (ms clock)", percentiles(toStore))
	fmt.Printf("%-44s %s\n", "  stored to stream (ms clock)", percentiles(toStream))
	if fail.Load() > 0 || int64(len(lat)) < ok.Load() {
		fmt.Printf("server log:\n%s\n", sender.logTail())
	}
	stop()
	o.wg.Wait()
	return nil
}

// parallel runs f for 0..n-1 on k goroutines and answers the first error.
func parallel(k, n int, f func(i int) error) error {
	var next atomic.Int64
	var first error
	var once sync.Once
	var wg sync.WaitGroup
	for w := 0; w < k; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := f(i); err != nil {
					once.Do(func() { first = err })
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// procRSS is a process's resident memory in kB.
func procRSS(pid int) int64 { return procStatusOf(pid, "VmRSS") }

// streamObserver holds the streams and records what arrives on them.
type streamObserver struct {
	wg        sync.WaitGroup
	ready     atomic.Int64
	broadcast atomic.Int64
	probes    atomic.Int64
	mu        sync.RWMutex
	arrived   []atomic.Int64
	stored    []atomic.Int64 // the message's createdAt: when delivery stored it
}

func (o *streamObserver) reset(n int) {
	o.mu.Lock()
	o.arrived = make([]atomic.Int64, n)
	o.stored = make([]atomic.Int64, n)
	o.mu.Unlock()
	o.probes.Store(0)
}

// open starts one stream per token and waits until each said ready.
func (o *streamObserver) open(ctx context.Context, base string, tokens []string) error {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = len(tokens)
	hc := &http.Client{Transport: tr}
	o.ready.Store(0)
	errs := make(chan error, 1)
	for i, tok := range tokens {
		o.wg.Add(1)
		go func() {
			defer o.wg.Done()
			if err := o.follow(ctx, hc, base+"/v1/inbox/stream?token="+tok); err != nil && ctx.Err() == nil {
				select {
				case errs <- fmt.Errorf("stream %d: %w", i, err):
				default:
				}
			}
		}()
		if i%200 == 199 { // do not open 10,000 connections in one burst
			time.Sleep(20 * time.Millisecond)
		}
	}
	t0 := time.Now()
	for o.ready.Load() < int64(len(tokens)) {
		select {
		case err := <-errs:
			return err
		case <-time.After(10 * time.Millisecond):
		}
		if time.Since(t0) > 2*time.Minute {
			return fmt.Errorf("only %d of %d streams ready", o.ready.Load(), len(tokens))
		}
	}
	return nil
}

// follow reads one stream until ctx ends.
func (o *streamObserver) follow(ctx context.Context, hc *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("status %d: %s", resp.StatusCode, b)
	}
	sc := bufio.NewScanner(resp.Body)
	var event string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			event = line[len("event: "):]
		case strings.HasPrefix(line, "data: "):
			o.handle(event, line[len("data: "):])
		}
	}
	return sc.Err()
}

func (o *streamObserver) handle(event, data string) {
	now := time.Now().UnixNano()
	switch event {
	case "ready":
		o.ready.Add(1)
	case "message.created":
		var e struct {
			Message struct {
				Title     string    `json:"title"`
				CreatedAt time.Time `json:"createdAt"`
			} `json:"message"`
		}
		if json.Unmarshal([]byte(data), &e) != nil {
			return
		}
		if e.Message.Title == "all" {
			o.broadcast.Add(1)
			return
		}
		i, err := strconv.Atoi(e.Message.Title)
		o.mu.RLock()
		defer o.mu.RUnlock()
		if err == nil && i >= 0 && i < len(o.arrived) && o.arrived[i].CompareAndSwap(0, now) {
			o.stored[i].Store(e.Message.CreatedAt.UnixNano())
			o.probes.Add(1)
		}
	}
}

// goMemory is the Go runtime's account of a process's memory, from its
// /metrics: goroutines, their stacks, and the heap in use.
func goMemory(base string) string {
	r, err := http.Get(base + "/metrics")
	if err != nil {
		return err.Error()
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	v := map[string]float64{}
	for _, line := range strings.Split(string(b), "\n") {
		name, val, ok := strings.Cut(line, " ")
		if ok && (name == "go_goroutines" || name == "go_memstats_stack_inuse_bytes" || name == "go_memstats_heap_inuse_bytes") {
			v[name], _ = strconv.ParseFloat(val, 64)
		}
	}
	return fmt.Sprintf("%.0f goroutines, stacks %.1f MB, heap in use %.1f MB", v["go_goroutines"],
		v["go_memstats_stack_inuse_bytes"]/(1<<20), v["go_memstats_heap_inuse_bytes"]/(1<<20))
}

// percentiles sorts ds and prints its p50, p99 and max.
func percentiles(ds []time.Duration) string {
	if len(ds) == 0 {
		return "none"
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	at := func(p float64) time.Duration {
		return ds[min(int(float64(len(ds))*p), len(ds)-1)].Round(time.Millisecond / 10)
	}
	return fmt.Sprintf("p50 %v  p99 %v  max %v", at(0.5), at(0.99), ds[len(ds)-1].Round(time.Millisecond/10))
}
