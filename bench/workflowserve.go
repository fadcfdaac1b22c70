package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"
)

// The workflowserve scenario is issue 34's first benchmark: the default
// `notifyd serve`, one chata_bot account pointed at the local sink, 10,000
// recipient profiles each with a chat target, a published chata_bot
// template, and a published workflow of one send step on it. Signed calls
// arrive from 16 connections (-conns) for b.duration per phase while
// delivery runs, in four phases A B A B: A sends the template to a
// profile (POST /v1/notifications, recipient.id), B triggers the workflow
// for a profile (POST /v1/workflows/{key}/trigger) whose run sends the
// same template. Each phase waits until the sink got every message its
// calls asked for. Target: B accepts at least 0.8 of A's rate.

const workflowServeProfiles = 10000

func (b *bench) workflowServe(ctx context.Context) error {
	if !flagSet("conns") {
		b.conns = 16
	}
	header("default notifyd serve: workflow triggers against plain sends of the same template, A B A B", b)
	p, sk, _, err := b.chatServe(ctx, workflowServeProfiles, nil)
	if err != nil {
		return err
	}
	defer sk.srv.Close()
	// The first word of the text is the call's id: the sink counts by it.
	if err := chatTemplate(ctx, p.owner, "wfb", "{{id}} "+chatText(0)[len("m000000000 "):]); err != nil {
		return err
	}
	wf := map[string]any{"key": "bench", "name": "Bench", "publish": true,
		"steps": []map[string]any{{"key": "send", "type": "send", "channel": "chata_bot", "templateCode": "wfb"}}}
	if r, err := p.owner.Dashboard(ctx, "POST", "/v1/workflows", wf); err != nil || r.Status != http.StatusCreated {
		return fmt.Errorf("workflow: %v %s", err, r.Body)
	}
	var seq atomic.Int64
	call := func(trigger bool) (string, []byte) {
		i := seq.Add(1)
		user, id := fmt.Sprintf("user-%05d", i%workflowServeProfiles), fmt.Sprintf("m%09d", i)
		if trigger {
			out, _ := json.Marshal(map[string]any{"recipients": []string{user}, "payload": map[string]any{"id": id}})
			return "/v1/workflows/bench/trigger", out
		}
		out, _ := json.Marshal(map[string]any{"channel": "chata_bot", "recipient": map[string]any{"id": user},
			"content": map[string]any{"templateCode": "wfb", "templateVariables": map[string]string{"id": id}}})
		return "/v1/notifications", out
	}
	var rates [2][]float64
	for phase, trigger := range []bool{false, true, false, true} {
		name, want := "A: signed send of the template by recipient.id", http.StatusCreated
		if trigger {
			name, want = "B: signed trigger of a one-step workflow", http.StatusAccepted
		}
		before := int64(sk.unique())
		cpu0 := p.cpu()
		res := run(name, b.conns, b.duration, func(ctx context.Context, _ int) error {
			path, body := call(trigger)
			return post(ctx, p.key, "POST", path, body, want)
		})
		p.drained(sk, phase, before, res)
		fmt.Printf("%-44s %9.0f µs\n", "server CPU per message, accepted and delivered",
			float64((p.cpu()-cpu0).Microseconds())/float64(max(res.ok, 1)))
		k := 0
		if trigger {
			k = 1
		}
		rates[k] = append(rates[k], res.rate())
	}
	for i := range rates[0] {
		ratio(fmt.Sprintf("trigger / send, pair %d", i+1), rates[1][i], rates[0][i])
	}
	fmt.Printf("%-44s %9d\n", "duplicates (a text that arrived twice)", sk.dups.Load())
	return nil
}
