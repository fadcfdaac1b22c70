package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/store"
)

// testDeliveryMany: a run of more requests than one statement shape takes
// (the multi-row statements go in chunks) claims and settles every one.
func testDeliveryMany(t *testing.T, db *store.DB) {
	ws := Workspace(t, db)
	accs := acceptNow(t, db, ws, 87)
	now := t0.Add(time.Second)
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		js, err := tx.FindJobsOfQueueJob(ctx, accs[0].Job.QueueJobID)
		require.NoError(t, err)
		require.Len(t, js, 87)
		reqs, claimed, err := tx.ClaimRequests(ctx, js, now, "worker-a")
		require.NoError(t, err)
		require.Len(t, reqs, 87)
		for i, r := range reqs {
			require.Equal(t, r.ID, claimed[i].RequestID)
			r.Status, r.UpdatedAt = notify.StatusSent, now
			claimed[i].Status, claimed[i].FinishedAt = notify.JobCompleted, &now
		}
		settled, err := tx.SettleRequests(ctx, reqs)
		require.NoError(t, err)
		for _, ok := range settled {
			require.True(t, ok)
		}
		return tx.UpdateJobs(ctx, claimed)
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		for _, a := range accs {
			j, err := tx.FindJobByRequest(ctx, ws, a.Request.ID)
			require.NoError(t, err)
			require.Equal(t, notify.JobCompleted, j.Status)
			r, err := tx.FindRequest(ctx, ws, a.Request.ID)
			require.NoError(t, err)
			require.Equal(t, notify.StatusSent, r.Status)
		}
		return nil
	})
}

// acceptNow accepts n plain requests in one transaction: they share one
// queue job.
func acceptNow(t *testing.T, db *store.DB, ws string, n int) []*notify.Accept {
	t.Helper()
	accs := make([]*notify.Accept, n)
	for i := range accs {
		accs[i] = &notify.Accept{Request: newRequest(ws, ""), MaxAttempts: 3}
	}
	update(t, db, func(ctx context.Context, tx notify.Tx) error { return tx.AcceptRequests(ctx, accs, t0) })
	for _, a := range accs[1:] {
		require.Equal(t, accs[0].Job.QueueJobID, a.Job.QueueJobID, "one group commit, one queue job")
	}
	return accs
}

// testDeliveryClaim: a run finds the open job rows of its queue job and
// claims their requests, leaving out one canceled meanwhile; the claimed
// jobs count an attempt; another queue job's rows are not touched.
func testDeliveryClaim(t *testing.T, db *store.DB) {
	ws := Workspace(t, db)
	accs := acceptNow(t, db, ws, 4)
	other := acceptNow(t, db, ws, 1)
	qid := accs[0].Job.QueueJobID
	require.NotEqual(t, qid, other[0].Job.QueueJobID)
	now := t0.Add(time.Second)
	// One request is canceled (row and job), one reached a final state
	// while its job row is still open (a cancel racing the claim).
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		r, j := accs[0].Request, accs[0].Job
		r.Status, r.UpdatedAt = notify.StatusCanceled, now
		j.Status = notify.JobCanceled
		if err := tx.UpdateRequest(ctx, r); err != nil {
			return err
		}
		if err := tx.UpdateJob(ctx, j); err != nil {
			return err
		}
		accs[1].Request.Status = notify.StatusCanceled
		return tx.UpdateRequest(ctx, accs[1].Request)
	})
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		js, err := tx.FindJobsOfQueueJob(ctx, qid)
		require.NoError(t, err)
		require.Len(t, js, 3, "the canceled job row is not open")
		reqs, claimed, err := tx.ClaimRequests(ctx, js, now, "worker-a")
		require.NoError(t, err)
		require.Len(t, reqs, 2, "a request in a final state is not claimed")
		require.Len(t, claimed, 2)
		got := map[string]bool{}
		for i, r := range reqs {
			got[r.ID] = true
			require.Equal(t, notify.StatusProcessing, r.Status)
			require.Equal(t, r.ID, claimed[i].RequestID, "answers in the same order")
			require.Equal(t, notify.JobProcessing, claimed[i].Status)
			require.Equal(t, 1, claimed[i].AttemptsMade)
			require.Equal(t, now, *claimed[i].StartedAt)
			require.Equal(t, "worker-a", claimed[i].RunOwner, "the claiming process is recorded")
			require.Equal(t, "hi", r.Text, "the whole request is read back")
		}
		require.True(t, got[accs[2].Request.ID] && got[accs[3].Request.ID])
		// A run taken over claims a processing request again.
		reqs, claimed, err = tx.ClaimRequests(ctx, claimed[:1], now.Add(time.Minute), "worker-b")
		require.NoError(t, err)
		require.Len(t, reqs, 1)
		require.Equal(t, 1, claimed[0].AttemptsMade, "a run taken over keeps the attempt number")
		require.Equal(t, "worker-b", claimed[0].RunOwner, "the new owner replaces the dead one")
		js, err = tx.FindJobsOfQueueJob(ctx, qid)
		require.NoError(t, err)
		owners := map[string]int{}
		for _, j := range js {
			owners[j.RunOwner]++
		}
		require.Equal(t, map[string]int{"": 1, "worker-a": 1, "worker-b": 1}, owners, "owners are read back")
		return nil
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		j, err := tx.FindJobByRequest(ctx, ws, other[0].Request.ID)
		require.NoError(t, err)
		require.Equal(t, notify.JobQueued, j.Status, "another queue job's rows are not claimed")
		r, err := tx.FindRequest(ctx, ws, accs[1].Request.ID)
		require.NoError(t, err)
		require.Equal(t, notify.StatusCanceled, r.Status)
		return nil
	})
}

// settleClaimed and settleEnd are when settleRun claims its requests and
// when their attempts end.
var (
	settleClaimed = t0.Add(time.Second)
	settleEnd     = settleClaimed.Add(time.Second)
)

// settleRun accepts three requests of a new workspace in one queue job
// and claims them at settleClaimed, as a delivery run does.
func settleRun(t *testing.T, db *store.DB) (ws string, accs []*notify.Accept, reqs []*notify.Request, js []*notify.Job) {
	t.Helper()
	ws = Workspace(t, db)
	accs = acceptNow(t, db, ws, 3)
	update(t, db, func(ctx context.Context, tx notify.Tx) (err error) {
		list, err := tx.FindJobsOfQueueJob(ctx, accs[0].Job.QueueJobID)
		require.NoError(t, err)
		reqs, js, err = tx.ClaimRequests(ctx, list, settleClaimed, "worker-a")
		return err
	})
	require.Len(t, reqs, 3)
	return ws, accs, reqs, js
}

// testDeliverySettle: outcomes are written with multi-row statements; a
// request canceled while its attempt was in flight keeps its state; job
// rows, queue jobs of their own, events and suppressions round-trip.
func testDeliverySettle(t *testing.T, open Opener) {
	runVerbs(t, open, []verb{
		{"SettleRequests", testSettleRequests, perWorkspace},
		{"ScheduleDispatch", testScheduleDispatch, perWorkspace},
		{"UpdateJobs", testUpdateJobs, perWorkspace},
		{"CreateEvents", testCreateEvents, allWorkspaces},
		{"FindSuppressed", testFindSuppressed, perWorkspace},
	})
}

func testSettleRequests(t *testing.T, db *store.DB) {
	ws, _, reqs, _ := settleRun(t, db)
	// A cancel lands while the attempts are in flight.
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		r := *reqs[2]
		r.Status = notify.StatusCanceled
		return tx.UpdateRequest(ctx, &r)
	})
	end := settleEnd
	reqs[0].Status, reqs[0].SelectedProviderID, reqs[0].SelectedMessageID, reqs[0].UpdatedAt = notify.StatusSent, "p1", "m1", end
	reqs[1].Status, reqs[1].UpdatedAt = notify.StatusQueued, end
	reqs[2].Status, reqs[2].UpdatedAt = notify.StatusSent, end
	// The decisions its dispatch added go with the settlement.
	decided := notify.Decision{Stage: notify.StageDispatch, At: end, Kind: notify.DecisionPreference, Channel: notify.ChannelSMS,
		Outcome: notify.OutcomeAllowed, Rule: "default", Detail: "sms is on (rule default)"}
	reqs[0].Decisions = append(reqs[0].Decisions, decided)
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		settled, err := tx.SettleRequests(ctx, reqs)
		require.NoError(t, err)
		require.Equal(t, []bool{true, true, false}, settled)
		return nil
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		r, err := tx.FindRequest(ctx, ws, reqs[0].ID)
		require.NoError(t, err)
		require.Equal(t, notify.StatusSent, r.Status)
		require.Equal(t, "m1", r.SelectedMessageID)
		require.Equal(t, end, r.UpdatedAt)
		require.Equal(t, reqs[0].Decisions, r.Decisions)
		r, err = tx.FindRequest(ctx, ws, reqs[1].ID)
		require.NoError(t, err)
		require.Empty(t, r.Decisions)
		r, err = tx.FindRequest(ctx, ws, reqs[2].ID)
		require.NoError(t, err)
		require.Equal(t, notify.StatusCanceled, r.Status, "a cancel in flight stands")
		return nil
	})
}

// settleRetryAt is when the job settleRetry sets runs again.
var settleRetryAt = settleEnd.Add(3 * time.Second)

// settleRetry makes j a job to retry at settleRetryAt.
func settleRetry(j *notify.Job) {
	at := settleRetryAt
	j.Status, j.NextRetryAt, j.LastErrorCode, j.LastErrorMessage = notify.JobRetrying, &at, "rate_limited", "slow down"
	j.LastProviderAccountID = "p2"
}

// testScheduleDispatch: a job to retry gets a queue job of its own.
func testScheduleDispatch(t *testing.T, db *store.DB) {
	ws, accs, reqs, js := settleRun(t, db)
	settleRetry(js[1])
	before := countRows(t, db, "river_job")
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.NoError(t, tx.ScheduleDispatch(ctx, js[1:2], []time.Time{settleRetryAt}, []notify.Lane{notify.LaneTransactional}))
		require.NotEqual(t, accs[0].Job.QueueJobID, js[1].QueueJobID, "a retry leaves the shared job")
		return tx.UpdateJobs(ctx, js[1:2])
	})
	require.Equal(t, before+1, countRows(t, db, "river_job"))
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		j, err := tx.FindJobByRequest(ctx, ws, reqs[1].ID)
		require.NoError(t, err)
		require.Equal(t, js[1].QueueJobID, j.QueueJobID)
		return nil
	})
}

// testUpdateJobs: job rows are written with one multi-row statement.
func testUpdateJobs(t *testing.T, db *store.DB) {
	ws, _, reqs, js := settleRun(t, db)
	end := settleEnd
	js[0].Status, js[0].FinishedAt = notify.JobCompleted, &end
	settleRetry(js[1])
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.NoError(t, tx.UpdateJobs(ctx, js[:2]))
		return nil
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		j, err := tx.FindJobByRequest(ctx, ws, reqs[1].ID)
		require.NoError(t, err)
		require.Equal(t, notify.JobRetrying, j.Status)
		require.Equal(t, settleRetryAt, *j.NextRetryAt)
		require.Equal(t, "rate_limited", j.LastErrorCode)
		require.Equal(t, "p2", j.LastProviderAccountID)
		require.Equal(t, 1, j.AttemptsMade)
		j, err = tx.FindJobByRequest(ctx, ws, reqs[0].ID)
		require.NoError(t, err)
		require.Equal(t, notify.JobCompleted, j.Status)
		require.Equal(t, end, *j.FinishedAt)
		require.Nil(t, j.NextRetryAt)
		return nil
	})
}

func testCreateEvents(t *testing.T, db *store.DB) {
	ws, _, reqs, _ := settleRun(t, db)
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		return tx.CreateEvents(ctx, []*notify.Event{
			notify.RequestEvent(id(), notify.EventDelivered, reqs[0], settleEnd),
			{ID: id(), WorkspaceID: ws, Type: notify.EventFailed, RequestID: reqs[1].ID, Payload: map[string]any{"a": "b"}, CreatedAt: settleEnd},
		})
	})
	require.Equal(t, 2, countRows(t, db, "events"))
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		evs, err := tx.PendingEvents(ctx, 10)
		require.NoError(t, err)
		require.Len(t, evs, 2)
		return nil
	})
}

// testFindSuppressed: suppressions are looked up many at a time, per
// workspace.
func testFindSuppressed(t *testing.T, db *store.DB) {
	ws := Workspace(t, db)
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		return tx.PutSuppression(ctx, ws, "gone@example.com", "hard_bounce", t0)
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.FindSuppressed(ctx, ws, []string{"gone@example.com", "here@example.com"})
		require.NoError(t, err)
		require.Equal(t, map[string]bool{"gone@example.com": true}, got)
		got, err = tx.FindSuppressed(ctx, Workspace0, []string{"gone@example.com"})
		require.NoError(t, err)
		require.Empty(t, got, "another workspace's suppressions are not seen")
		return nil
	})
}

// testDeliveryBreakers: closing a circuit writes only rows that are not
// closed already; locked reads return the current state.
func testDeliveryBreakers(t *testing.T, db *store.DB) {
	open := &notify.BreakerRecord{ProviderAccountID: id(), State: "OPEN", Failures: 5, OpenedUntil: t0.Add(time.Minute), UpdatedAt: t0}
	closed := &notify.BreakerRecord{ProviderAccountID: id(), State: "CLOSED", UpdatedAt: t0}
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		if err := tx.PutBreaker(ctx, open); err != nil {
			return err
		}
		return tx.PutBreaker(ctx, closed)
	})
	later := t0.Add(time.Hour)
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		return tx.CloseBreakers(ctx, []string{open.ProviderAccountID, closed.ProviderAccountID, id()}, later)
	})
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.LockBreakers(ctx, []string{open.ProviderAccountID, closed.ProviderAccountID})
		require.NoError(t, err)
		require.Len(t, got, 2)
		o := got[open.ProviderAccountID]
		require.Equal(t, notify.BreakerClosed, o.State)
		require.Zero(t, o.Failures)
		require.False(t, o.TrialInFlight)
		require.Equal(t, later, o.UpdatedAt)
		require.Equal(t, t0, got[closed.ProviderAccountID].UpdatedAt, "a closed row is not rewritten")
		return nil
	})
}

// testOpenJobs: the job list holds the unfinished jobs and the dead
// letters, newest enqueued first, and nothing finished otherwise or of
// another workspace.
func testOpenJobs(t *testing.T, db *store.DB) {
	ws := Workspace(t, db)
	other := Workspace(t, db)
	mk := func(ws string, at time.Time, status notify.JobStatus, finished bool) *notify.Job {
		r := newRequest(ws, "")
		j := &notify.Job{ID: id(), WorkspaceID: ws, RequestID: r.ID, QueueJobID: 1, Status: status, MaxAttempts: 3, QueuedAt: at}
		if finished {
			j.FinishedAt = &at
		}
		update(t, db, func(ctx context.Context, tx notify.Tx) error {
			if err := tx.CreateDirectRequest(ctx, r, j); err != nil {
				return err
			}
			if status != notify.JobDeadLetter {
				return nil
			}
			return tx.CreateDeadLetter(ctx, &notify.DeadLetter{ID: id(), WorkspaceID: ws, JobID: j.ID, RequestID: r.ID,
				Channel: notify.ChannelSMS, FailedReason: "x", FailedAt: at, AttemptsMade: 3})
		})
		return j
	}
	queued := mk(ws, t0.Add(1*time.Second), notify.JobQueued, false)
	dead := mk(ws, t0.Add(2*time.Second), notify.JobDeadLetter, true)
	mk(ws, t0.Add(3*time.Second), notify.JobCompleted, true)
	mk(ws, t0.Add(4*time.Second), notify.JobCanceled, true)
	processing := mk(ws, t0.Add(5*time.Second), notify.JobProcessing, false)
	retrying := mk(ws, t0.Add(6*time.Second), notify.JobRetrying, false)
	mk(other, t0.Add(7*time.Second), notify.JobQueued, false)
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.FindOpenJobs(ctx, ws, 10)
		require.NoError(t, err)
		var ids []string
		for _, o := range got {
			ids = append(ids, o.Job.ID)
			require.Equal(t, notify.ChannelSMS, o.Channel)
		}
		require.Equal(t, []string{retrying.ID, processing.ID, dead.ID, queued.ID}, ids)
		got, err = tx.FindOpenJobs(ctx, ws, 2)
		require.NoError(t, err)
		require.Len(t, got, 2)
		require.Equal(t, retrying.ID, got[0].Job.ID)
		return nil
	})
}
