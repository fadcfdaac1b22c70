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
// delivery runs: A sends the template to a profile (POST
// /v1/notifications, recipient.id), B triggers the workflow for a profile
// (POST /v1/workflows/{key}/trigger) whose run sends the same template.
// Each phase waits until the sink got every message its calls asked for.
// The order is recipientserve's (abphases.go): a warm-up A B, not
// counted, then A B A B A, with each B's ratio also taken against the
// mean of the A phases around it. Target: B accepts at least 0.8 of A's
// rate.

const workflowServeProfiles = 10000

func (b *bench) workflowServe(ctx context.Context) error {
	if !flagSet("conns") {
		b.conns = 16
	}
	header("default notifyd serve: workflow triggers against plain sends of the same template, warm-up A B, then A B A B A", b)
	p, sk, dbURL, err := b.chatServe(ctx, workflowServeProfiles, nil)
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
	op := func(trigger bool, want int) func(ctx context.Context, _ int) error {
		return func(ctx context.Context, _ int) error {
			path, body := call(trigger)
			return post(ctx, p.key, "POST", path, body, want)
		}
	}
	ab, err := b.newABRun(ctx, p, sk, dbURL, [2]abKind{
		{name: "A: signed send of the template by recipient.id", short: "send", op: op(false, http.StatusCreated)},
		{name: "B: signed trigger of a one-step workflow", short: "trigger", op: op(true, http.StatusAccepted)}})
	if err != nil {
		return err
	}
	defer ab.close()
	ab.bracketed()
	fmt.Printf("%-44s %9d\n", "duplicates (a text that arrived twice)", sk.dups.Load())
	return nil
}
