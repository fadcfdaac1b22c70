package pipeline_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/config"
	"github.com/notifyd/notifyd/internal/notifytest"
)

// SPEC request state table, row by row, through the daemon and simulator.

// (new) → queued → processing → sent.
func TestStateQueuedProcessingSent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := b.env.SimProvider(t, "vendora_sms", "aligo", nil)
	notifytest.PutRoutes(t, b.env.Owner, notifytest.Route{Channel: "sms", ProviderAccountID: p, Priority: 1})
	// A slow provider call keeps the request in processing long enough to see.
	fault(t, b, map[string]any{"kind": "vendora_sms", "latencyMs": 600})
	res := notifytest.Send(t, b.key, notifytest.SMS("01012345678", "slow"))
	require.Equal(t, "queued", res.Status)
	require.NotNil(t, res.QueueJobID)
	mid := notifytest.WaitFor(t, b.key, res.RequestID, "processing", func(o notifytest.Request) bool { return o.Status == "processing" })
	require.Equal(t, "processing", mid.Job.Status)
	require.Nil(t, mid.SelectedProviderAccountID)
	out := notifytest.Wait(t, b.key, res.RequestID)
	require.Equal(t, "sent", out.Status)
	require.Equal(t, p, *out.SelectedProviderAccountID)
	require.NotEmpty(t, *out.SelectedProviderMessageID)
	require.Nil(t, out.FinalErrorCode)
	require.Equal(t, "completed", out.Job.Status)
	require.Equal(t, 1, out.Job.AttemptsMade)
	require.Equal(t, *res.QueueJobID, out.Job.QueueJobID)
}

// processing → queued (retryable failure, retries remain) → sent.
func TestStateRetryThenSent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := b.env.SimProvider(t, "vendora_sms", "aligo", nil)
	notifytest.PutRoutes(t, b.env.Owner, notifytest.Route{Channel: "sms", ProviderAccountID: p, Priority: 1})
	fault(t, b, map[string]any{"kind": "vendora_sms", "status": 500, "count": 1})
	res := notifytest.Send(t, b.key, notifytest.SMS("01012345678", "retry"))
	out := notifytest.Wait(t, b.key, res.RequestID)
	require.Equal(t, "sent", out.Status)
	require.Nil(t, out.FinalErrorCode)
	require.Equal(t, "completed", out.Job.Status)
	require.Equal(t, 2, out.Job.AttemptsMade)
	require.Equal(t, 3, out.Job.MaxAttempts)
	require.Len(t, out.Attempts, 2)
	require.Equal(t, "failure", out.Attempts[0].Status)
	require.Equal(t, "temporary_unavailable", *out.Attempts[0].FailureCode)
	require.Equal(t, "success", out.Attempts[1].Status)
	require.Len(t, b.env.Sim.Messages("vendora_sms", "", 0), 1)
}

// The request goes back to queued between job runs (job retrying).
func TestStateRetryGoesBackToQueued(t *testing.T) {
	t.Parallel()
	// A long backoff holds the request between runs.
	b := setup(t, func(c *config.Config) { c.QueueBackoff = 2 * time.Second })
	p := b.env.SimProvider(t, "vendora_sms", "aligo", nil)
	notifytest.PutRoutes(t, b.env.Owner, notifytest.Route{Channel: "sms", ProviderAccountID: p, Priority: 1})
	fault(t, b, map[string]any{"kind": "vendora_sms", "status": 500, "count": 1})
	res := notifytest.Send(t, b.key, notifytest.SMS("01012345678", "retry"))
	// The status lookup reads the request first: on PostgreSQL (READ
	// COMMITTED) the job and attempts it reads next may be newer, so wait
	// on the request's own status.
	mid := notifytest.WaitFor(t, b.key, res.RequestID, "back to queued after the first run", func(o notifytest.Request) bool {
		return o.Status == "queued" && len(o.Attempts) == 1
	})
	require.Equal(t, "retrying", mid.Job.Status)
	require.Equal(t, 1, mid.Job.AttemptsMade)
	require.NotNil(t, mid.Job.LastError)
	require.Equal(t, "temporary_unavailable", mid.Job.LastError.Code)
	require.Nil(t, mid.FinalErrorCode)
	jobs := b.jobs(t)
	require.Len(t, jobs, 1)
	require.Equal(t, "retrying", jobs[0].Status)
	require.NotNil(t, jobs[0].NextRetryAt)
	require.Equal(t, res.RequestID, jobs[0].NotificationRequestID)
}

// processing → failed when the job's retries are spent: dead letter.
func TestStateRetriesExhaustedDeadLetter(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := b.env.SimProvider(t, "vendora_sms", "aligo", nil)
	notifytest.PutRoutes(t, b.env.Owner, notifytest.Route{Channel: "sms", ProviderAccountID: p, Priority: 1})
	fault(t, b, map[string]any{"kind": "vendora_sms", "status": 500, "count": 3})
	res := notifytest.Send(t, b.key, notifytest.SMS("01012345678", "doomed"))
	out := notifytest.Wait(t, b.key, res.RequestID)
	require.Equal(t, "failed", out.Status)
	require.Equal(t, "temporary_unavailable", *out.FinalErrorCode)
	require.NotEmpty(t, *out.FinalErrorMessage)
	require.Nil(t, out.SelectedProviderAccountID)
	require.Equal(t, "dead_letter", out.Job.Status)
	require.Equal(t, 3, out.Job.AttemptsMade)
	require.Len(t, out.Attempts, 3)

	dl := b.deadLetters(t)
	require.Equal(t, 1, dl.Count)
	require.Len(t, dl.Items, 1)
	it := dl.Items[0]
	require.Equal(t, out.Job.ID, it.JobID)
	require.Equal(t, res.RequestID, it.Data.NotificationRequestID)
	require.Equal(t, b.env.Workspace, it.Data.WorkspaceID)
	require.Equal(t, "sms", it.Data.Channel)
	require.Equal(t, 3, it.AttemptsMade)
	require.Contains(t, it.FailedReason, "temporary_unavailable")
	require.NotEmpty(t, it.FailedAt)
}

// processing → failed at once on a non-retryable failure, no fallback.
func TestStateNonRetryableFailsAtOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p1, _ := b.twoRoutes(t, "vendora_sms", "vendorb_sms")
	fault(t, b, map[string]any{"kind": "vendora_sms", "status": 401})
	res := notifytest.Send(t, b.key, notifytest.SMS("01012345678", "bad key"))
	out := notifytest.Wait(t, b.key, res.RequestID)
	require.Equal(t, "failed", out.Status)
	require.Equal(t, "unauthorized", *out.FinalErrorCode)
	require.Len(t, out.Attempts, 1)
	require.Equal(t, p1, out.Attempts[0].ProviderAccountID)
	require.Empty(t, b.env.Sim.Messages("vendorb_sms", "", 0))
	require.Equal(t, "failed", out.Job.Status)
	require.Equal(t, 1, out.Job.AttemptsMade)
	require.Zero(t, b.deadLetters(t).Count)
}

// queued (scheduled) → canceled through the Notification API; a second
// cancel and cancels of terminal requests change nothing.
func TestStateCancelScheduled(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := b.env.SimProvider(t, "vendora_sms", "aligo", nil)
	notifytest.PutRoutes(t, b.env.Owner, notifytest.Route{Channel: "sms", ProviderAccountID: p, Priority: 1})
	body := notifytest.SMS("01012345678", "later")
	body["scheduledAt"] = time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	res := notifytest.Send(t, b.key, body)
	require.Equal(t, "queued", res.Status)

	c := b.cancel(t, res.RequestID)
	require.True(t, c.Canceled)
	require.Equal(t, "canceled", c.Status)
	require.Equal(t, res.RequestID, c.RequestID)
	out := notifytest.Lookup(t, b.key, res.RequestID)
	require.Equal(t, "canceled", out.Status)
	require.Equal(t, "canceled_by_api", *out.FinalErrorCode)
	require.Equal(t, "canceled", out.Job.Status)
	require.Empty(t, out.Attempts)
	require.Empty(t, b.jobs(t))

	again := b.cancel(t, res.RequestID)
	require.False(t, again.Canceled)
	require.Equal(t, "canceled", again.Status)
}

// Cancel of sent and failed requests: unchanged, canceled false.
func TestStateCancelTerminal(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := b.env.SimProvider(t, "vendora_sms", "aligo", nil)
	notifytest.PutRoutes(t, b.env.Owner, notifytest.Route{Channel: "sms", ProviderAccountID: p, Priority: 1})
	sent := notifytest.Wait(t, b.key, notifytest.Send(t, b.key, notifytest.SMS("01012345678", "ok")).RequestID)
	require.Equal(t, "sent", sent.Status)
	fault(t, b, map[string]any{"kind": "vendora_sms", "vendorCode": -301})
	failed := notifytest.Wait(t, b.key, notifytest.Send(t, b.key, notifytest.SMS("01012345678", "bad")).RequestID)
	require.Equal(t, "failed", failed.Status)

	for _, o := range []notifytest.Request{sent, failed} {
		c := b.cancel(t, o.RequestID)
		require.False(t, c.Canceled)
		require.Equal(t, o.Status, c.Status)
		after := notifytest.Lookup(t, b.key, o.RequestID)
		require.Equal(t, o.Status, after.Status)
		require.Equal(t, o.FinalErrorCode, after.FinalErrorCode)
	}
}

// processing → canceled: the cancel lands while the attempt is in flight;
// the request stays canceled after the attempt ends.
func TestStateCancelProcessing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := b.env.SimProvider(t, "vendora_sms", "aligo", nil)
	notifytest.PutRoutes(t, b.env.Owner, notifytest.Route{Channel: "sms", ProviderAccountID: p, Priority: 1})
	fault(t, b, map[string]any{"kind": "vendora_sms", "latencyMs": 600})
	res := notifytest.Send(t, b.key, notifytest.SMS("01012345678", "in flight"))
	notifytest.WaitFor(t, b.key, res.RequestID, "processing", func(o notifytest.Request) bool { return o.Status == "processing" })
	c := b.cancel(t, res.RequestID)
	require.True(t, c.Canceled)
	require.Equal(t, "canceled", c.Status)
	// The attempt finishes and is recorded; the request stays canceled.
	out := notifytest.WaitFor(t, b.key, res.RequestID, "attempt recorded", func(o notifytest.Request) bool { return len(o.Attempts) == 1 })
	require.Equal(t, "canceled", out.Status)
	require.Equal(t, "canceled_by_api", *out.FinalErrorCode)
	time.Sleep(100 * time.Millisecond)
	require.Equal(t, "canceled", notifytest.Lookup(t, b.key, res.RequestID).Status)
}

// Dashboard job-cancel: scheduled → 204 and both canceled; a job in
// another state → 409; unknown → 404.
func TestDashboardJobCancel(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := b.env.SimProvider(t, "vendora_sms", "aligo", nil)
	notifytest.PutRoutes(t, b.env.Owner, notifytest.Route{Channel: "sms", ProviderAccountID: p, Priority: 1})
	body := notifytest.SMS("01012345678", "later")
	body["scheduledAt"] = time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	res := notifytest.Send(t, b.key, body)
	jobs := b.jobs(t)
	require.Len(t, jobs, 1)
	require.Equal(t, "scheduled", jobs[0].Status)
	require.Equal(t, res.RequestID, jobs[0].NotificationRequestID)

	r := notifytest.Dash(t, b.env.Owner, "POST", "/v1/jobs/"+jobs[0].ID+"/cancel", nil)
	require.Equal(t, http.StatusNoContent, r.Status, string(r.Body))
	out := notifytest.Lookup(t, b.key, res.RequestID)
	require.Equal(t, "canceled", out.Status)
	require.Equal(t, "canceled_by_api", *out.FinalErrorCode)
	require.Equal(t, "canceled", out.Job.Status)
	require.Empty(t, b.jobs(t))
	// Canceled now: no longer scheduled.
	notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, "POST", "/v1/jobs/"+jobs[0].ID+"/cancel", nil), http.StatusConflict, "SVC-40900")

	// A job being processed.
	fault(t, b, map[string]any{"kind": "vendora_sms", "latencyMs": 600})
	res2 := notifytest.Send(t, b.key, notifytest.SMS("01012345678", "now"))
	mid := notifytest.WaitFor(t, b.key, res2.RequestID, "processing", func(o notifytest.Request) bool { return o.Status == "processing" })
	notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, "POST", "/v1/jobs/"+mid.Job.ID+"/cancel", nil), http.StatusConflict, "SVC-40900")
	done := notifytest.Wait(t, b.key, res2.RequestID)
	require.Equal(t, "sent", done.Status)
	// A completed job.
	notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, "POST", "/v1/jobs/"+done.Job.ID+"/cancel", nil), http.StatusConflict, "SVC-40900")

	notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, "POST", "/v1/jobs/"+uuid.NewString()+"/cancel", nil), http.StatusNotFound, "SVC-40400")
	notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, "POST", "/v1/jobs/not-a-uuid/cancel", nil), http.StatusNotFound, "")
}

// A job of another workspace is unknown there.
func TestDashboardJobCancelOtherWorkspace(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := b.env.SimProvider(t, "vendora_sms", "aligo", nil)
	notifytest.PutRoutes(t, b.env.Owner, notifytest.Route{Channel: "sms", ProviderAccountID: p, Priority: 1})
	body := notifytest.SMS("01012345678", "later")
	body["scheduledAt"] = time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	res := notifytest.Send(t, b.key, body)
	jobID := notifytest.Lookup(t, b.key, res.RequestID).Job.ID
	other, _ := b.env.NewWorkspace(t, "Other", "other@example.com")
	r, err := other.Dashboard(ctx, "POST", "/v1/jobs/"+jobID+"/cancel", nil)
	require.NoError(t, err)
	notifytest.RequireProblem(t, r, http.StatusNotFound, "SVC-40400")
	require.Equal(t, "queued", notifytest.Lookup(t, b.key, res.RequestID).Status)
}

// queued between job runs (job retrying) → canceled: the pending retry is
// removed and never runs.
func TestStateCancelRetrying(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *config.Config) { c.QueueBackoff = 400 * time.Millisecond })
	p := b.env.SimProvider(t, "vendora_sms", "aligo", nil)
	notifytest.PutRoutes(t, b.env.Owner, notifytest.Route{Channel: "sms", ProviderAccountID: p, Priority: 1})
	fault(t, b, map[string]any{"kind": "vendora_sms", "status": 500, "count": 1})
	res := notifytest.Send(t, b.key, notifytest.SMS("01012345678", "retry"))
	notifytest.WaitFor(t, b.key, res.RequestID, "back to queued after the first run", func(o notifytest.Request) bool {
		return o.Status == "queued" && len(o.Attempts) == 1
	})
	c := b.cancel(t, res.RequestID)
	require.True(t, c.Canceled)
	require.Equal(t, "canceled", c.Status)
	time.Sleep(time.Second) // past the retry's backoff
	out := notifytest.Lookup(t, b.key, res.RequestID)
	require.Equal(t, "canceled", out.Status)
	require.Equal(t, "canceled_by_api", *out.FinalErrorCode)
	require.Equal(t, "canceled", out.Job.Status)
	require.Len(t, out.Attempts, 1)
	require.Empty(t, b.env.Sim.Messages("vendora_sms", "", 0))
	require.Empty(t, b.jobs(t))
}
