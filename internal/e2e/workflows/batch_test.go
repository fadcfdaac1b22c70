package workflows_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notifytest"
)

// TestDelaysEndingTogether: runs whose delay ends at the same instant
// (their steps share a batch job) each go on to their send step once:
// the delay ends as waited, the send as done with one request each, and
// a repeated trigger of the same idempotency key adds nothing.
func TestDelaysEndingTogether(t *testing.T) {
	t.Parallel()
	env, k := setup(t)
	define(t, env.Owner, "later", map[string]any{"key": "wait", "type": "delay", "until": "at"}, send("sms", "sms", "note"))
	at := time.Now().Add(2 * time.Second).UTC().Format(time.RFC3339)
	body := map[string]any{"recipients": []string{"u-1", "u-2", "u-3"}, "payload": map[string]any{"title": "x", "at": at}, "idempotencyKey": "batch-1"}
	runs := trigger(t, k, "later", body)
	require.Len(t, runs, 3)
	again := trigger(t, k, "later", body)
	seen := map[string]bool{}
	for i, s := range runs {
		require.Equal(t, s.RunID, again[i].RunID)
		r := waitRun(t, k, s.RunID)
		require.Equal(t, "completed", r.Status)
		require.Equal(t, []string{"wait:done", "sms:done"}, stepKeys(r))
		require.Equal(t, "waited", *step(r, "wait").Outcome)
		require.Len(t, r.RequestIDs, 1, "one message per run")
		require.False(t, seen[r.RequestIDs[0]])
		seen[r.RequestIDs[0]] = true
	}
}

// TestLeadingSendRefused: a trigger whose first step is a send writes
// that send with the run; a send refused (no phone on the profile) ends
// the step as not sent and the run goes on, as a send step run by its
// job does.
func TestLeadingSendRefused(t *testing.T) {
	t.Parallel()
	env, k := setup(t)
	notifytest.DashboardCall(t, env.Owner, "PUT", "/v1/recipients/u-9", map[string]any{"email": "u9@example.com"}, http.StatusCreated)
	define(t, env.Owner, "text", send("sms", "sms", "note"), send("inapp", "inapp", "note"))
	runs := trigger(t, k, "text", map[string]any{"recipients": []string{"u-1", "u-9"}, "payload": map[string]any{"title": "x"}})
	ok, refused := getRun(t, k, runs[0].RunID), getRun(t, k, runs[1].RunID)
	require.Equal(t, "done", step(ok, "sms").Status, "the leading send ended with its trigger")
	require.NotNil(t, step(ok, "sms").RequestID)
	require.Equal(t, "failed", step(refused, "sms").Status)
	require.Contains(t, *step(refused, "sms").Outcome, "not_sent: ")
	for _, s := range runs {
		r := waitRun(t, k, s.RunID)
		require.Equal(t, "completed", r.Status)
		require.Equal(t, "done", step(r, "inapp").Status)
	}
}

// TestBatchEvents: a batch of delays ending together sends the events of
// the types a webhook takes, and only those: each run's delay and send
// step ends, no run end when no webhook takes it.
func TestBatchEvents(t *testing.T) {
	t.Parallel()
	env, k := setup(t)
	rc := webhook(t, env, "workflow.step.ended")
	define(t, env.Owner, "later", map[string]any{"key": "wait", "type": "delay", "until": "at"}, send("sms", "sms", "note"))
	at := time.Now().Add(2 * time.Second).UTC().Format(time.RFC3339)
	runs := trigger(t, k, "later", map[string]any{"recipients": []string{"u-1", "u-2"}, "payload": map[string]any{"title": "x", "at": at}})
	require.Len(t, runs, 2)
	want := map[string]bool{}
	for _, s := range runs {
		r := waitRun(t, k, s.RunID)
		require.Equal(t, "completed", r.Status)
		want[s.RunID+" wait waited"], want[s.RunID+" sms sent"] = true, true
	}
	type event struct {
		Type string `json:"type"`
		Data struct {
			RunID string `json:"runId"`
			Step  struct {
				Key     string `json:"key"`
				Outcome string `json:"outcome"`
			} `json:"step"`
		} `json:"data"`
	}
	var got map[string]bool
	var types []string
	require.Eventually(t, func() bool {
		got, types = map[string]bool{}, nil
		for _, r := range rc.Requests() {
			var e event
			if json.Unmarshal(r.Body, &e) != nil {
				return false
			}
			types = append(types, e.Type)
			got[e.Data.RunID+" "+e.Data.Step.Key+" "+e.Data.Step.Outcome] = true
		}
		return len(got) == len(want)
	}, 30*time.Second, 50*time.Millisecond)
	require.Equal(t, want, got)
	for _, typ := range types {
		require.Equal(t, "workflow.step.ended", typ, "only the types the webhook takes")
	}
}
