package workflows_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notifytest"
)

// TestIdempotentTrigger: a trigger repeated with the same idempotency key
// starts no second run and answers the first; another key starts one.
func TestIdempotentTrigger(t *testing.T) {
	t.Parallel()
	env, k := setup(t)
	define(t, env.Owner, "note", send("inapp", "inapp", "note"))
	body := map[string]any{"recipients": []string{"u-1", "u-2"}, "payload": map[string]any{"title": "x"}, "idempotencyKey": "order-1"}
	first := trigger(t, k, "note", body)
	again := trigger(t, k, "note", body)
	require.Equal(t, first[0].RunID, again[0].RunID)
	require.Equal(t, first[1].RunID, again[1].RunID)
	require.False(t, first[0].Deduplicated)
	require.True(t, again[0].Deduplicated)
	body["idempotencyKey"] = "order-2"
	other := trigger(t, k, "note", body)
	require.NotEqual(t, first[0].RunID, other[0].RunID)
	// Only three runs for u-1... two: order-1 and order-2.
	runs := notifytest.Data[struct {
		Runs []run `json:"runs"`
	}](t, notifytest.Signed(t, k, "GET", "/v1/workflow-runs?workflow=note&recipientId=u-1", nil), http.StatusOK).Runs
	require.Len(t, runs, 2)
	for _, r := range runs {
		require.Len(t, waitRun(t, k, r.ID).RequestIDs, 1, "one message per run")
	}
}

// TestCancel: cancellation by key stops every pending step of the
// matching runs (and only those); nothing more is sent.
func TestCancel(t *testing.T) {
	t.Parallel()
	env, k := setup(t)
	define(t, env.Owner, "remind", send("inapp", "inapp", "note"), map[string]any{"key": "wait", "type": "delay", "duration": "3s"},
		send("sms", "sms", "note"))
	doomed := trigger(t, k, "remind", map[string]any{"recipients": []string{"u-1", "u-2"}, "cancellationKey": "cart-9"})
	kept := trigger(t, k, "remind", map[string]any{"recipients": []string{"u-3"}, "cancellationKey": "cart-10"})
	for _, s := range doomed {
		waitStep(t, k, s.RunID, "inapp")
	}
	n := notifytest.Data[struct {
		Canceled int `json:"canceledRuns"`
	}](t, notifytest.Signed(t, k, "POST", "/v1/workflows/remind/cancel", map[string]any{"cancellationKey": "cart-9"}), http.StatusOK).Canceled
	require.Equal(t, 2, n)
	for _, s := range doomed {
		r := getRun(t, k, s.RunID)
		require.Equal(t, "canceled", r.Status)
		require.Equal(t, []string{"inapp:done", "wait:canceled"}, stepKeys(r))
	}
	keptRun := waitRun(t, k, kept[0].RunID)
	require.Equal(t, "completed", keptRun.Status, "another key's run goes on")
	require.Equal(t, "sent", notifytest.Wait(t, k, keptRun.RequestIDs[1]).Status)
	time.Sleep(4 * time.Second) // past the canceled delay
	for _, s := range doomed {
		r := getRun(t, k, s.RunID)
		require.Equal(t, []string{"inapp:done", "wait:canceled"}, stepKeys(r))
		require.Len(t, r.RequestIDs, 1)
	}
	require.Empty(t, env.Sim.Messages("vendora_sms", "+15550000001", 10))
	require.Len(t, env.Sim.Messages("vendora_sms", "+15550000003", 10), 1)
	again := notifytest.Data[struct {
		Canceled int `json:"canceledRuns"`
	}](t, notifytest.Signed(t, k, "POST", "/v1/workflows/remind/cancel", map[string]any{"cancellationKey": "cart-9"}), http.StatusOK).Canceled
	require.Zero(t, again)
}

// TestThrottle: one run per hour lets the first through and ends the
// second as throttled.
func TestThrottle(t *testing.T) {
	t.Parallel()
	env, k := setup(t)
	define(t, env.Owner, "alert", map[string]any{"key": "limit", "type": "throttle", "limit": 1, "window": "1h"}, send("sms", "sms", "note"))
	first := trigger(t, k, "alert", map[string]any{"recipients": []string{"u-1"}})
	r := waitRun(t, k, first[0].RunID)
	require.Equal(t, "completed", r.Status)
	require.Equal(t, "passed", *step(r, "limit").Outcome)
	require.Equal(t, "sent", notifytest.Wait(t, k, r.RequestIDs[0]).Status)
	second := trigger(t, k, "alert", map[string]any{"recipients": []string{"u-1"}})
	r = waitRun(t, k, second[0].RunID)
	require.Equal(t, "throttled", r.Status)
	require.Equal(t, []string{"limit:done"}, stepKeys(r))
	require.Empty(t, r.RequestIDs)
	other := trigger(t, k, "alert", map[string]any{"recipients": []string{"u-2"}})
	require.Equal(t, "completed", waitRun(t, k, other[0].RunID).Status, "per recipient")
	require.Len(t, env.Sim.Messages("vendora_sms", "+15550000001", 10), 1)
}

// TestDigest: 50 triggers for one recipient within a second, with two
// worker processes taking the steps, give exactly one digest message
// carrying 50 items; the other runs end digested.
func TestDigest(t *testing.T) {
	t.Parallel()
	env, k := setup(t)
	env.StartPeer(t, nil, notifytest.WithRole("worker"))
	define(t, env.Owner, "comments", map[string]any{"key": "collect", "type": "digest", "window": "5s"}, send("sms", "sms", "digest"))
	const n = 50
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids[i] = trigger(t, k, "comments", map[string]any{"recipients": []string{"u-1"},
				"payload": map[string]any{"title": "comment " + strconv.Itoa(i)}})[0].RunID
		}()
	}
	wg.Wait()
	counts := map[string]int{}
	var leader run
	for _, id := range ids {
		r := waitRun(t, k, id)
		counts[r.Status]++
		if r.Status == "completed" {
			leader = r
		}
	}
	require.Equal(t, map[string]int{"completed": 1, "digested": n - 1}, counts)
	require.NotNil(t, leader.Digest)
	require.Equal(t, n, leader.Digest.Count)
	require.Len(t, leader.Digest.Items, n)
	require.Len(t, leader.RequestIDs, 1, "%v", *step(leader, "sms").Outcome)
	require.Equal(t, "sent", notifytest.Wait(t, k, leader.RequestIDs[0]).Status)
	msgs := env.Sim.Messages("vendora_sms", "+15550000001", 10)
	require.Len(t, msgs, 1)
	require.Contains(t, msgs[0].Text, "50 new: comment ")
}

// TestRunEvents: a webhook subscribed to the workflow events receives a
// run's start, each step's end and the run's end.
func TestRunEvents(t *testing.T) {
	t.Parallel()
	env, k := setup(t)
	rc := webhook(t, env, "workflow.run.started", "workflow.run.ended", "workflow.step.ended")
	define(t, env.Owner, "note", send("inapp", "inapp", "note"))
	s := trigger(t, k, "note", map[string]any{"recipients": []string{"u-1"}})
	waitRun(t, k, s[0].RunID)
	type event struct {
		Type string `json:"type"`
		Data struct {
			RunID       string         `json:"runId"`
			WorkflowKey string         `json:"workflowKey"`
			RecipientID string         `json:"recipientId"`
			Status      string         `json:"status"`
			Step        map[string]any `json:"step"`
		} `json:"data"`
	}
	var got []event
	require.Eventually(t, func() bool {
		got = nil
		for _, r := range rc.Requests() {
			var e event
			if json.Unmarshal(r.Body, &e) == nil && e.Data.RunID == s[0].RunID {
				got = append(got, e)
			}
		}
		return len(got) == 3
	}, 30*time.Second, 50*time.Millisecond)
	types := map[string]event{}
	for _, e := range got {
		types[e.Type] = e
	}
	require.Equal(t, "running", types["workflow.run.started"].Data.Status)
	require.Equal(t, "completed", types["workflow.run.ended"].Data.Status)
	require.Equal(t, "u-1", types["workflow.run.ended"].Data.RecipientID)
	st := types["workflow.step.ended"].Data.Step
	require.Equal(t, "inapp", st["key"])
	require.Equal(t, "sent", st["outcome"])
	require.NotEmpty(t, st["requestId"])
}
