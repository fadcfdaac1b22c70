package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/store"
)

// Dead-letter replay: the conditional take-out of the queue and the
// requests' way back to queued; the bulk audit write it records with.

// deadLettered stores a request of ws on channel whose job spent 3
// attempts and failed with code at failedAt, as a delivery run leaves it
// (request failed, job dead_letter, a dead letter), and returns both.
func deadLettered(t *testing.T, db *store.DB, ws string, ch notify.Channel, code notify.FailureCode, failedAt time.Time) (*notify.Request, *notify.Job) {
	t.Helper()
	r := newRequest(ws, "")
	r.Channel = ch
	a := &notify.Accept{Request: r, MaxAttempts: 3}
	update(t, db, func(ctx context.Context, tx notify.Tx) error { return tx.AcceptRequests(ctx, []*notify.Accept{a}, t0) })
	j := a.Job
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		r.Status, r.FinalErrorCode, r.FinalErrorMessage, r.UpdatedAt = notify.StatusFailed, string(code), "vendor said no", failedAt
		if err := tx.UpdateRequest(ctx, r); err != nil {
			return err
		}
		j.Status, j.AttemptsMade, j.StartedAt, j.FinishedAt = notify.JobDeadLetter, 3, &failedAt, &failedAt
		j.LastErrorCode, j.LastErrorMessage = string(code), "vendor said no"
		if err := tx.UpdateJob(ctx, j); err != nil {
			return err
		}
		return tx.CreateDeadLetter(ctx, &notify.DeadLetter{ID: id(), WorkspaceID: ws, JobID: j.ID, RequestID: r.ID, Channel: ch,
			FailedReason: string(code) + ": vendor said no", FailedAt: failedAt, AttemptsMade: 3})
	})
	return r, j
}

// replay runs ReplayDeadLetters in a transaction of its own and answers
// the job ids it replayed.
func replay(t *testing.T, db *store.DB, ws string, f notify.DeadLetterFilter, now time.Time) []string {
	t.Helper()
	var got []string
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		ds, err := tx.ReplayDeadLetters(ctx, ws, f, 3, now)
		for _, d := range ds {
			require.Equal(t, ws, d.WorkspaceID)
			got = append(got, d.JobID)
		}
		return err
	})
	return got
}

// testReplayDeadLetters: each filter field selects, and only within the
// workspace; a replayed item leaves the queue (a second replay finds
// nothing), its request is queued without its final error, and its job
// row is queued in a new queue job with its attempt count kept and three
// more attempts allowed.
func testReplayDeadLetters(t *testing.T, db *store.DB) {
	ws, other := Workspace(t, db), Workspace(t, db)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	smsTemp, smsTempJob := deadLettered(t, db, ws, notify.ChannelSMS, notify.FailureTemporaryUnavailable, at(1))
	_, smsRateJob := deadLettered(t, db, ws, notify.ChannelSMS, notify.FailureRateLimited, at(2))
	_, mailTempJob := deadLettered(t, db, ws, notify.ChannelEmail, notify.FailureTemporaryUnavailable, at(3))
	_, mailLateJob := deadLettered(t, db, ws, notify.ChannelEmail, notify.FailureUnknown, at(10))
	_, otherJob := deadLettered(t, db, other, notify.ChannelSMS, notify.FailureTemporaryUnavailable, at(1))
	// A dead letter whose job is no longer dead (an inconsistent row) is
	// not the queue's to replay.
	_, movedJob := deadLettered(t, db, ws, notify.ChannelSMS, notify.FailureTemporaryUnavailable, at(4))
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		movedJob.Status = notify.JobCompleted
		return tx.UpdateJob(ctx, movedJob)
	})
	now := t0.Add(time.Hour)

	// One item by job id; another workspace's id finds nothing.
	require.Empty(t, replay(t, db, other, notify.DeadLetterFilter{JobID: smsTempJob.ID}, now))
	require.Equal(t, []string{smsTempJob.ID}, replay(t, db, ws, notify.DeadLetterFilter{JobID: smsTempJob.ID}, now))
	require.Empty(t, replay(t, db, ws, notify.DeadLetterFilter{JobID: smsTempJob.ID}, now), "a replayed item is out of the queue")
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		r, err := tx.FindRequest(ctx, ws, smsTemp.ID)
		require.NoError(t, err)
		require.Equal(t, notify.StatusQueued, r.Status)
		require.Empty(t, r.FinalErrorCode)
		require.Empty(t, r.FinalErrorMessage)
		require.Equal(t, now, r.UpdatedAt)
		j, err := tx.FindJob(ctx, ws, smsTempJob.ID)
		require.NoError(t, err)
		require.Equal(t, notify.JobQueued, j.Status)
		require.Equal(t, 3, j.AttemptsMade, "the attempt count goes on")
		require.Equal(t, 6, j.MaxAttempts, "a fresh budget of 3")
		require.Equal(t, now, j.QueuedAt)
		require.Nil(t, j.StartedAt)
		require.Nil(t, j.FinishedAt)
		require.Nil(t, j.NextRetryAt)
		require.Equal(t, string(notify.FailureTemporaryUnavailable), j.LastErrorCode, "the last failure stays until a success")
		require.NotEqual(t, smsTempJob.QueueJobID, j.QueueJobID, "a new queue job")
		// The new queue job carries the request: a run finds it.
		open, err := tx.FindJobsOfQueueJob(ctx, j.QueueJobID)
		require.NoError(t, err)
		require.Len(t, open, 1)
		require.Equal(t, j.ID, open[0].ID)
		_, n, err := tx.FindDeadLetters(ctx, ws, 10)
		require.NoError(t, err)
		require.Equal(t, 4, n)
		return nil
	})

	// By channel and failure code together, then by time range.
	require.Equal(t, []string{mailTempJob.ID}, replay(t, db, ws,
		notify.DeadLetterFilter{Channel: notify.ChannelEmail, FailureCode: notify.FailureTemporaryUnavailable}, now))
	from, to := at(2), at(4)
	require.Equal(t, []string{smsRateJob.ID}, replay(t, db, ws, notify.DeadLetterFilter{From: &from, To: &to}, now),
		"from and to are inclusive; the moved job is not taken")
	late := at(10)
	require.Equal(t, []string{mailLateJob.ID}, replay(t, db, ws, notify.DeadLetterFilter{From: &late}, now))
	require.Empty(t, replay(t, db, ws, notify.DeadLetterFilter{}, now))

	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		ds, n, err := tx.FindDeadLetters(ctx, ws, 10)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		require.Equal(t, movedJob.ID, ds[0].JobID)
		_, n, err = tx.FindDeadLetters(ctx, other, 10)
		require.NoError(t, err)
		require.Equal(t, 1, n, "another workspace's queue is untouched")
		j, err := tx.FindJob(ctx, other, otherJob.ID)
		require.NoError(t, err)
		require.Equal(t, notify.JobDeadLetter, j.Status)
		return nil
	})
	// Everything left of the other workspace, oldest failure first.
	require.Equal(t, []string{otherJob.ID}, replay(t, db, other, notify.DeadLetterFilter{}, now))
}

// testReplayDeadLettersConcurrent: replays of the same items at once
// (two operators pressing together) take each item exactly once.
func testReplayDeadLettersConcurrent(t *testing.T, db *store.DB) {
	ws := Workspace(t, db)
	const n = 20
	want := map[string]bool{}
	for i := range n {
		_, j := deadLettered(t, db, ws, notify.ChannelSMS, notify.FailureTemporaryUnavailable, t0.Add(time.Duration(i)*time.Second))
		want[j.ID] = true
	}
	const workers = 4
	got := make([][]string, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if w%2 == 0 {
				got[w] = replay(t, db, ws, notify.DeadLetterFilter{}, t0.Add(time.Hour))
				return
			}
			// Item by item, as single replays would.
			for jid := range want {
				got[w] = append(got[w], replay(t, db, ws, notify.DeadLetterFilter{JobID: jid}, t0.Add(time.Hour))...)
			}
		}()
	}
	wg.Wait()
	seen := map[string]int{}
	for _, ids := range got {
		for _, id := range ids {
			seen[id]++
		}
	}
	require.Len(t, seen, n)
	for id, c := range seen {
		require.True(t, want[id])
		require.Equal(t, 1, c, "job %s replayed %d times", id, c)
	}
}

// testCreateAudits: a bulk write lands every entry, listed like single ones.
func testCreateAudits(t *testing.T, db *store.DB) {
	ws := Workspace(t, db)
	user := "user-1"
	var es []*notify.AuditEntry
	for i := range 3 {
		es = append(es, &notify.AuditEntry{ID: id(), WorkspaceID: ws, ActorUserID: &user, Action: "dead_letter.replay",
			TargetType: "dead_letter", TargetID: id(), Payload: map[string]any{"n": float64(i)}, CreatedAt: t0})
	}
	es[2].ActorUserID, es[2].Payload = nil, nil
	update(t, db, func(ctx context.Context, tx notify.Tx) error { return tx.CreateAudits(ctx, es) })
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.FindAudit(ctx, ws, notify.AuditFilter{Action: "dead_letter.replay", Limit: 10})
		require.NoError(t, err)
		require.Len(t, got, 3)
		require.Equal(t, es[2].ID, got[0].ID, "newest id first within one time")
		require.Nil(t, got[0].ActorUserID)
		require.Empty(t, got[0].Payload)
		require.Equal(t, es[0].ID, got[2].ID)
		require.Equal(t, user, *got[2].ActorUserID)
		require.Equal(t, es[0].TargetID, got[2].TargetID)
		require.Equal(t, map[string]any{"n": float64(0)}, got[2].Payload)
		require.Equal(t, t0, got[2].CreatedAt)
		return nil
	})
}
