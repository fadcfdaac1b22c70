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
// begins; a warm-up A B, not counted, runs first (abphases.go). Then A B
// A B again, paced at -rate a second (default 60% of the slowest A): the
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
	op := func(byID bool) func(ctx context.Context, _ int) error {
		return func(ctx context.Context, _ int) error {
			return post(ctx, p.key, "POST", "/v1/notifications", body(byID), http.StatusCreated)
		}
	}
	ab, err := b.newABRun(ctx, p, sk, dbURL, [2]abKind{
		{name: "A: signed send by recipient.address", short: "by address", op: op(false)},
		{name: "B: signed send by recipient.id + category", short: "by id", op: op(true)}})
	if err != nil {
		return err
	}
	defer ab.close()
	// Same connections, same client, same text sizes for both kinds; a B
	// body is longer by the category and the id's name.
	fmt.Printf("%-44s %9d bytes (B %d bytes)\n", "body of a send, A", len(body(false)), len(body(true)))
	rates := ab.bracketed()
	// At saturation a p99 is mostly the wait of 16 callers in line. The
	// latency a send has at a load the server carries: both kinds paced at
	// -rate a second (default: 60% of the slowest A phase), A B A B again.
	paced := b.rate
	if !flagSet("rate") {
		paced = int(0.6*slices.Min(rates[0])) / 10 * 10
	}
	var pacedP99 [2][]time.Duration
	for n, k := range []int{0, 1, 0, 1} {
		res, _ := ab.phase(n+6, k, paced)
		pacedP99[k] = append(pacedP99[k], res.pct(0.99))
	}
	fmt.Printf("%-44s %v, %v (by address %v, %v)\n", fmt.Sprintf("p99 by id paced at %d/s", paced),
		pacedP99[1][0].Round(time.Millisecond/10), pacedP99[1][1].Round(time.Millisecond/10),
		pacedP99[0][0].Round(time.Millisecond/10), pacedP99[0][1].Round(time.Millisecond/10))
	fmt.Printf("%-44s %9d\n", "duplicates (a text that arrived twice)", sk.dups.Load())
	return nil
}
