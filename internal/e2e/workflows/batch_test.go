package workflows_test

import (
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
