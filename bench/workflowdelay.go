package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

// The workflowdelay scenario is issue 34's second benchmark: 100,000
// runs (-n) whose delay ends at the same instant all reach their send
// step within 30 s on PostgreSQL, none sent twice. The default `notifyd
// serve` gets 1,000 recipient profiles and a published workflow of two
// steps: a delay until the payload's "at", then a send of a chata_bot
// template to the local sink. Bulk triggers of 1,000 recipients each
// (from 4 connections) start the runs, every payload naming the same
// instant, far enough ahead (-duration when given, else 150 s) for every
// trigger to be in. From that instant the scenario waits until the sink
// has every run's message (its text is the trigger's number and the
// recipient, unique per run) and reports when the last arrived; on
// PostgreSQL it reads when the last send step ended from the database.

const workflowDelayProfiles = 1000

func (b *bench) workflowDelay(ctx context.Context) error {
	if !flagSet("n") {
		b.n = 100_000
	}
	if !flagSet("conns") {
		b.conns = 4
	}
	lead := 150 * time.Second
	if flagSet("duration") {
		lead = b.duration
	}
	header(fmt.Sprintf("default notifyd serve: %d workflow runs whose delay ends at the same instant", b.n), b)
	p, sk, dbURL, err := b.chatServe(ctx, workflowDelayProfiles, nil)
	if err != nil {
		return err
	}
	defer sk.srv.Close()
	if err := chatTemplate(ctx, p.owner, "wfd", "t{{id}}-{{recipientId}} "+chatText(0)[len("m000000000 "):]); err != nil {
		return err
	}
	wf := map[string]any{"key": "later", "name": "Later", "publish": true, "steps": []map[string]any{
		{"key": "wait", "type": "delay", "until": "at"},
		{"key": "send", "type": "send", "channel": "chata_bot", "templateCode": "wfd"}}}
	if r, err := p.owner.Dashboard(ctx, "POST", "/v1/workflows", wf); err != nil || r.Status != http.StatusCreated {
		return fmt.Errorf("workflow: %v %s", err, r.Body)
	}
	recipients := make([]string, workflowDelayProfiles)
	for i := range recipients {
		recipients[i] = fmt.Sprintf("user-%05d", i)
	}
	start := time.Now()
	instant := start.Add(lead).Truncate(time.Second)
	calls := (b.n + workflowDelayProfiles - 1) / workflowDelayProfiles
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, b.conns)
	for range b.conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= calls {
					return
				}
				n := min(workflowDelayProfiles, b.n-i*workflowDelayProfiles)
				body, _ := json.Marshal(map[string]any{"recipients": recipients[:n],
					"payload": map[string]any{"id": i, "at": instant.UTC().Format(time.RFC3339)}})
				if err := post(ctx, p.key, "POST", "/v1/workflows/later/trigger", body, http.StatusAccepted); err != nil {
					errs <- fmt.Errorf("trigger %d: %w", i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	triggered := time.Since(start)
	fmt.Printf("%-44s %9d in %s (%.0f runs/s), %s before the instant\n", "runs started by bulk triggers", b.n,
		triggered.Round(time.Millisecond), float64(b.n)/triggered.Seconds(), time.Until(instant).Round(time.Millisecond))
	if time.Now().After(instant) {
		return fmt.Errorf("the triggers took longer than the lead (%s): run again with a longer -duration", lead)
	}
	if early := sk.unique(); early > 0 {
		return fmt.Errorf("%d messages arrived before the instant", early)
	}
	time.Sleep(time.Until(instant))
	cpu0 := p.cpu()
	for sk.unique() < b.n && time.Since(instant) < 10*time.Minute {
		time.Sleep(20 * time.Millisecond)
	}
	last := time.Unix(0, sk.last.Load())
	fmt.Printf("%-44s %9d  (the last %s after the instant)\n", "messages at the sink", sk.unique(), last.Sub(instant).Round(time.Millisecond))
	fmt.Printf("%-44s %9.0f µs\n", "server CPU per run from the instant", float64((p.cpu()-cpu0).Microseconds())/float64(b.n))
	if b.db == "postgres" {
		conn, err := pgx.Connect(ctx, dbURL)
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		var steps, runs, requests, keys int
		var first, lastEnd int64
		if err := conn.QueryRow(ctx, `SELECT COUNT(*), COUNT(DISTINCT run_id), MIN(ended_at), MAX(ended_at) FROM workflow_run_steps
			WHERE step_type = 'send' AND ended_at IS NOT NULL`).Scan(&steps, &runs, &first, &lastEnd); err != nil {
			return err
		}
		if err := conn.QueryRow(ctx, `SELECT (SELECT COUNT(*) FROM notification_requests WHERE source = 'workflow'),
			(SELECT COUNT(DISTINCT request_id) FROM workflow_run_steps WHERE step_type = 'send')`).Scan(&requests, &keys); err != nil {
			return err
		}
		fmt.Printf("%-44s %9d  (of %d runs; first %s, last %s after the instant)\n", "send steps ended", steps, runs,
			time.UnixMilli(first).Sub(instant).Round(time.Millisecond), time.UnixMilli(lastEnd).Sub(instant).Round(time.Millisecond))
		fmt.Printf("%-44s %9d  (%d distinct on the send steps)\n", "requests made by the send steps", requests, keys)
	}
	fmt.Printf("%-44s %9d\n", "duplicates (a text that arrived twice)", sk.dups.Load())
	return nil
}
