package pipeline_test

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/notifytest"
)

// Dead-letter replay (issue 21, item 1): POST /v1/dead-letter/{jobId}/replay
// and POST /v1/dead-letter/replay.

type replayOut struct {
	Replayed              int    `json:"replayed"`
	JobID                 string `json:"jobId"`
	NotificationRequestID string `json:"notificationRequestId"`
	Status                string `json:"status"`
}

// replayOne replays one dead letter and answers the response.
func (b *bundle) replayOne(t *testing.T, c *client.Client, jobID string) *client.Response {
	t.Helper()
	r, err := c.Dashboard(ctx, "POST", "/v1/dead-letter/"+jobID+"/replay", nil)
	require.NoError(t, err)
	return r
}

// replaySet replays the dead letters filter selects and answers how many.
func (b *bundle) replaySet(t *testing.T, filter map[string]any) int {
	t.Helper()
	r := notifytest.Dash(t, b.env.Owner, "POST", "/v1/dead-letter/replay", filter)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	var out replayOut
	require.NoError(t, r.Decode(&out))
	return out.Replayed
}

// deadLetter sends body, waits until it is dead-lettered and answers it.
func (b *bundle) deadLetter(t *testing.T, body map[string]any) notifytest.Request {
	t.Helper()
	out := notifytest.Wait(t, b.key, notifytest.Send(t, b.key, body).RequestID)
	require.Equal(t, "failed", out.Status)
	require.Equal(t, "dead_letter", out.Job.Status)
	return out
}

type auditOut struct {
	Logs []struct {
		ActorUserID *string        `json:"actorUserId"`
		Action      string         `json:"action"`
		TargetType  string         `json:"targetType"`
		TargetID    string         `json:"targetId"`
		Payload     map[string]any `json:"payload"`
	} `json:"logs"`
}

func (b *bundle) replayAudit(t *testing.T) auditOut {
	t.Helper()
	r := notifytest.Dash(t, b.env.Owner, "GET", "/v1/audit-logs?action=dead_letter.replay", nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	var out auditOut
	require.NoError(t, r.Decode(&out))
	return out
}

// A request whose retries were spent on a failing provider is replayed
// once the provider works again: it is delivered, its three failed
// attempts stay in its history before the new successful one, the queue
// is empty, and the audit log names who replayed it. A second replay of
// the item is 409; the refusals change nothing.
func TestDeadLetterReplayOne(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := b.env.SimProvider(t, "vendora_sms", "aligo", nil)
	notifytest.PutRoutes(t, b.env.Owner, notifytest.Route{Channel: "sms", ProviderAccountID: p, Priority: 1})
	fault(t, b, map[string]any{"kind": "vendora_sms", "status": 500, "count": 3})
	dead := b.deadLetter(t, notifytest.SMS("01011110000", "after the fix"))
	require.Len(t, dead.Attempts, 3)
	require.Empty(t, b.env.Sim.Messages("vendora_sms", "01011110000", 0))
	sent := notifytest.Wait(t, b.key, notifytest.Send(t, b.key, notifytest.SMS("01022220000", "fine")).RequestID) // a job that is not a dead letter
	require.Equal(t, "sent", sent.Status)

	// Refusals first: none of them replays anything.
	viewer, operator := b.env.Member(t, "viewer"), b.env.Member(t, "operator")
	notifytest.RequireProblem(t, b.replayOne(t, viewer, dead.Job.ID), http.StatusForbidden, "SVC-40300")
	r, err := viewer.Dashboard(ctx, "POST", "/v1/dead-letter/replay", map[string]any{})
	require.NoError(t, err)
	notifytest.RequireProblem(t, r, http.StatusForbidden, "SVC-40300")
	other, _ := b.env.NewWorkspace(t, "Other", "other-dlq@example.com")
	notifytest.RequireProblem(t, b.replayOne(t, other, dead.Job.ID), http.StatusNotFound, "SVC-40400")
	r, err = other.Dashboard(ctx, "POST", "/v1/dead-letter/replay", map[string]any{})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	require.JSONEq(t, `{"replayed":0}`, string(r.Body), "another workspace's set holds nothing of this one")
	notifytest.RequireProblem(t, b.replayOne(t, b.env.Owner, uuid.NewString()), http.StatusNotFound, "SVC-40400")
	notifytest.RequireProblem(t, b.replayOne(t, b.env.Owner, "not-a-uuid"), http.StatusNotFound, "SVC-40400")
	notifytest.RequireProblem(t, b.replayOne(t, b.env.Owner, sent.Job.ID), http.StatusConflict, "SVC-40900")
	notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, "POST", "/v1/dead-letter/"+dead.Job.ID+"/replay", map[string]any{"force": true}), http.StatusBadRequest, "SVC-40000")
	for _, body := range []any{
		map[string]any{"channel": "fax"},
		map[string]any{"failureCode": "nope"},
		map[string]any{"from": "yesterday"},
		map[string]any{"to": "2026-13-01T00:00:00Z"},
		map[string]any{"from": "2026-11-02T00:00:00Z", "to": "2026-11-01T00:00:00Z"},
		map[string]any{"channel": 5},
		map[string]any{"everything": true},
		[]any{},
		nil, // no body: a set replay says what it selects, {} for everything
	} {
		notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, "POST", "/v1/dead-letter/replay", body), http.StatusBadRequest, "SVC-40000")
	}
	require.Equal(t, 1, b.deadLetters(t).Count)
	require.Empty(t, b.replayAudit(t).Logs)
	require.Equal(t, "failed", notifytest.Lookup(t, b.key, dead.RequestID).Status)

	// The provider works again (the faults are spent; clear them anyway).
	c := *b.env.Owner
	c.BaseURL, c.Token = b.env.SimURL, ""
	_, err = c.Dashboard(ctx, "DELETE", "/_sim/faults", nil)
	require.NoError(t, err)

	r = b.replayOne(t, operator, dead.Job.ID)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	var out replayOut
	require.NoError(t, r.Decode(&out))
	require.Equal(t, replayOut{Replayed: 1, JobID: dead.Job.ID, NotificationRequestID: dead.RequestID, Status: "queued"}, out)
	require.Zero(t, b.deadLetters(t).Count)

	got := notifytest.Wait(t, b.key, dead.RequestID)
	require.Equal(t, "sent", got.Status)
	require.Nil(t, got.FinalErrorCode)
	require.Equal(t, p, *got.SelectedProviderAccountID)
	require.Len(t, got.Attempts, 4, "the earlier attempts stay in the history")
	for i, a := range got.Attempts[:3] {
		require.Equal(t, "failure", a.Status, "attempt %d", i)
		require.Equal(t, "temporary_unavailable", *a.FailureCode)
	}
	require.Equal(t, "success", got.Attempts[3].Status)
	require.Equal(t, "completed", got.Job.Status)
	require.Equal(t, dead.Job.ID, got.Job.ID, "the same job row, queued again")
	require.NotEqual(t, dead.Job.QueueJobID, got.Job.QueueJobID, "in a new queue job")
	require.Equal(t, 4, got.Job.AttemptsMade)
	require.Equal(t, 6, got.Job.MaxAttempts, "a fresh budget of SVC_QUEUE_JOB_ATTEMPTS")
	require.Len(t, b.env.Sim.Messages("vendora_sms", "01011110000", 0), 1)
	require.Len(t, b.attempts(t, "?requestId="+dead.RequestID).Attempts, 4)

	// A second press finds the item gone.
	notifytest.RequireProblem(t, b.replayOne(t, b.env.Owner, dead.Job.ID), http.StatusConflict, "SVC-40900")
	logs := b.replayAudit(t).Logs
	require.Len(t, logs, 1)
	require.Equal(t, "dead_letter", logs[0].TargetType)
	require.Equal(t, dead.Job.ID, logs[0].TargetID)
	require.NotNil(t, logs[0].ActorUserID)
	require.Equal(t, dead.RequestID, logs[0].Payload["requestId"])
	require.Equal(t, "sms", logs[0].Payload["channel"])
	require.NotContains(t, logs[0].Payload, "filter")
	require.Len(t, b.env.Sim.Messages("vendora_sms", "01011110000", 0), 1)
}

// A set replay takes the dead letters its filter selects, by channel,
// failure code and failure time, and only those.
func TestDeadLetterReplaySet(t *testing.T) {
	t.Parallel()
	b := setup(t, notifytest.WithQueueJobAttempts(1))
	ps := b.env.SimProvider(t, "vendora_sms", "aligo", nil)
	pm := b.env.SimProvider(t, "mailx_email", "mail", nil)
	notifytest.PutRoutes(t, b.env.Owner, notifytest.Route{Channel: "sms", ProviderAccountID: ps, Priority: 1}, notifytest.Route{Channel: "email", ProviderAccountID: pm, Priority: 1})
	fault(t, b, map[string]any{"kind": "vendora_sms", "status": 500, "count": 1})
	smsDown := b.deadLetter(t, notifytest.SMS("01011110000", "down"))
	fault(t, b, map[string]any{"kind": "vendora_sms", "status": 429, "count": 1})
	smsBusy := b.deadLetter(t, notifytest.SMS("01022220000", "busy"))
	fault(t, b, map[string]any{"kind": "mailx_email", "status": 500, "count": 1})
	mailDown := b.deadLetter(t, notifytest.Email("down@example.com", "Hi", "down"))
	require.Equal(t, 3, b.deadLetters(t).Count)
	after := time.Now().Add(time.Minute).UTC().Format(time.RFC3339)

	// Nothing failed after a minute from now, nor before the epoch.
	require.Zero(t, b.replaySet(t, map[string]any{"from": after}))
	require.Zero(t, b.replaySet(t, map[string]any{"to": "1970-01-01T00:00:00Z"}))
	// sms and temporary_unavailable: only the first.
	require.Equal(t, 1, b.replaySet(t, map[string]any{"channel": "sms", "failureCode": "temporary_unavailable"}))
	require.Equal(t, "sent", notifytest.Wait(t, b.key, smsDown.RequestID).Status)
	require.Equal(t, "failed", notifytest.Lookup(t, b.key, smsBusy.RequestID).Status)
	require.Equal(t, "failed", notifytest.Lookup(t, b.key, mailDown.RequestID).Status)
	// rate_limited, within a window that holds every failure.
	require.Equal(t, 1, b.replaySet(t, map[string]any{"failureCode": "rate_limited", "from": "2020-01-01T00:00:00Z", "to": after}))
	require.Equal(t, "sent", notifytest.Wait(t, b.key, smsBusy.RequestID).Status)
	require.Equal(t, "failed", notifytest.Lookup(t, b.key, mailDown.RequestID).Status)
	// Everything left: the mail.
	require.Equal(t, 1, b.replaySet(t, map[string]any{}))
	mail := notifytest.Wait(t, b.key, mailDown.RequestID)
	require.Equal(t, "sent", mail.Status)
	require.Len(t, mail.Attempts, 2)
	require.Equal(t, "failure", mail.Attempts[0].Status)
	require.Equal(t, "success", mail.Attempts[1].Status)
	require.Zero(t, b.replaySet(t, map[string]any{}))
	require.Zero(t, b.deadLetters(t).Count)

	logs := b.replayAudit(t).Logs
	require.Len(t, logs, 3, "one entry per item replayed")
	require.Equal(t, mailDown.Job.ID, logs[0].TargetID)
	require.Equal(t, map[string]any{}, logs[0].Payload["filter"])
	require.Equal(t, smsDown.Job.ID, logs[2].TargetID)
	require.Equal(t, map[string]any{"channel": "sms", "failureCode": "temporary_unavailable"}, logs[2].Payload["filter"])
	for _, to := range []string{"01011110000", "01022220000"} {
		require.Len(t, b.env.Sim.Messages("vendora_sms", to, 0), 1, to)
	}
	require.Len(t, b.env.Sim.Messages("mailx_email", "down@example.com", 0), 1)
}

// Operators pressing at once: single replays and set replays of the same
// items race, and each item is replayed, and sent, exactly once.
func TestDeadLetterReplayRace(t *testing.T) {
	t.Parallel()
	b := setup(t, notifytest.WithQueueJobAttempts(1))
	p := b.env.SimProvider(t, "vendora_sms", "aligo", nil)
	notifytest.PutRoutes(t, b.env.Owner, notifytest.Route{Channel: "sms", ProviderAccountID: p, Priority: 1})
	fault(t, b, map[string]any{"kind": "vendora_sms", "status": 500, "count": 2})
	one := b.deadLetter(t, notifytest.SMS("01011110000", "one"))
	two := b.deadLetter(t, notifytest.SMS("01022220000", "two"))
	admin := b.env.Member(t, "admin")

	const rounds = 3
	var wg sync.WaitGroup
	single := make([]int, 2*rounds)
	set := make([]int, 2*rounds)
	for i := range 2 * rounds {
		c := b.env.Owner
		if i%2 == 1 {
			c = admin
		}
		wg.Add(2)
		go func() {
			defer wg.Done()
			r, err := c.Dashboard(ctx, "POST", "/v1/dead-letter/"+one.Job.ID+"/replay", nil)
			if err == nil {
				single[i] = r.Status
			}
		}()
		go func() {
			defer wg.Done()
			r, err := c.Dashboard(ctx, "POST", "/v1/dead-letter/replay", map[string]any{"channel": "sms"})
			if err == nil && r.Status == http.StatusOK {
				var out replayOut
				if r.Decode(&out) == nil {
					set[i] = out.Replayed
				}
			}
		}()
	}
	wg.Wait()
	oks, replayed := 0, 0
	for i := range single {
		require.Contains(t, []int{http.StatusOK, http.StatusConflict}, single[i])
		if single[i] == http.StatusOK {
			oks++
		}
		replayed += set[i]
	}
	require.LessOrEqual(t, oks, 1)
	require.Equal(t, 2, oks+replayed, "each of the two items replayed exactly once")
	require.Len(t, b.replayAudit(t).Logs, 2)

	for _, d := range []notifytest.Request{one, two} {
		got := notifytest.Wait(t, b.key, d.RequestID)
		require.Equal(t, "sent", got.Status)
		require.Len(t, got.Attempts, 2)
		require.Equal(t, 2, got.Job.AttemptsMade)
	}
	// Nothing more arrives later: one send each reached the vendor.
	time.Sleep(300 * time.Millisecond)
	require.Len(t, b.env.Sim.Messages("vendora_sms", "01011110000", 0), 1)
	require.Len(t, b.env.Sim.Messages("vendora_sms", "01022220000", 0), 1)
	require.Zero(t, b.deadLetters(t).Count)
}
