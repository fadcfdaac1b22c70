package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/jobs"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/store"
	"github.com/notifyd/notifyd/internal/store/sqlstore"
)

// queueJob is what the crash tests read of a River job.
type queueJob struct {
	state, queue, kind string
	crashes            int
}

func readQueueJob(t *testing.T, db *store.DB, id int64) queueJob {
	t.Helper()
	meta := `metadata::text`
	if db.Dialect == "sqlite" {
		meta = `json(metadata)`
	}
	var q queueJob
	var m string
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		return tx.(*sqlstore.Tx).Conn().QueryRow(ctx, `SELECT state, queue, kind, `+meta+` FROM river_job WHERE id = ?`, id).
			Scan(&q.state, &q.queue, &q.kind, &m)
	})
	q.crashes = jobs.Crashes([]byte(m))
	return q
}

// runningQueueJob marks River job id running, fetched a minute ago by
// worker process owner, with crashes counted already.
func runningQueueJob(t *testing.T, db *store.DB, id int64, owner string, crashes int) {
	t.Helper()
	q := `UPDATE river_job SET state = 'running', attempt = 1, attempted_at = now() - interval '1 minute',
		attempted_by = ARRAY[?]::text[], metadata = ?::jsonb WHERE id = ?`
	if db.Dialect == "sqlite" {
		q = `UPDATE river_job SET state = 'running', attempt = 1, attempted_at = strftime('%Y-%m-%d %H:%M:%f', 'now', '-1 minute'),
			attempted_by = jsonb(json_array(?)), metadata = jsonb(?) WHERE id = ?`
	}
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		_, err := tx.(*sqlstore.Tx).Conn().Exec(ctx, q, owner, string(jobs.CrashMetadata(crashes)), id)
		return err
	})
}

// testRescueCountsCrashes: the rescue hands back the running jobs of a
// process without a heartbeat and counts the crash in each (at two the
// job moves to the isolated queue); this process's own abandoned job is
// handed back uncounted; a live process's job and this one's busy job
// stay running.
func testRescueCountsCrashes(t *testing.T, db *store.DB) {
	ws := Workspace(t, db)
	var ids []int64
	for range 5 {
		ids = append(ids, acceptNow(t, db, ws, 1)[0].Job.QueueJobID)
	}
	now := time.Now()
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		return tx.PutDispatchWorker(ctx, &notify.DispatchWorker{ID: "live", HeartbeatAt: now})
	})
	runningQueueJob(t, db, ids[0], "dead", 0)
	runningQueueJob(t, db, ids[1], "dead", 1)
	runningQueueJob(t, db, ids[2], "self", 0) // abandoned: neither worked nor ended lately
	runningQueueJob(t, db, ids[3], "live", 0)
	runningQueueJob(t, db, ids[4], "self", 0) // busy
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		n, err := tx.RescueQueueJobs(ctx, now.Add(-8*time.Second), now, "self", []int64{ids[4]})
		require.Equal(t, 3, n)
		return err
	})
	require.Equal(t, queueJob{"available", jobs.QueueDefault, "dispatch_batch", 1}, readQueueJob(t, db, ids[0]))
	require.Equal(t, queueJob{"available", jobs.QueueIsolated, "dispatch_batch", 2}, readQueueJob(t, db, ids[1]))
	require.Equal(t, queueJob{"available", jobs.QueueDefault, "dispatch_batch", 0}, readQueueJob(t, db, ids[2]), "not a crash")
	require.Equal(t, queueJob{"running", jobs.QueueDefault, "dispatch_batch", 0}, readQueueJob(t, db, ids[3]))
	require.Equal(t, queueJob{"running", jobs.QueueDefault, "dispatch_batch", 0}, readQueueJob(t, db, ids[4]))

	// The only worker (SQLite under its lock) hands back every running
	// job as a dead process's: each counts a crash.
	runningQueueJob(t, db, ids[1], "dead", 2)
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		n, err := tx.RescueQueueJobs(ctx, now.Add(time.Hour), now.Add(time.Hour), "", nil)
		require.Equal(t, 3, n)
		return err
	})
	require.Equal(t, queueJob{"available", jobs.QueueIsolated, "dispatch_batch", 3}, readQueueJob(t, db, ids[1]))
	require.Equal(t, queueJob{"available", jobs.QueueDefault, "dispatch_batch", 1}, readQueueJob(t, db, ids[3]))
	require.Equal(t, queueJob{"available", jobs.QueueDefault, "dispatch_batch", 1}, readQueueJob(t, db, ids[4]))
}

// testIsolateDispatch: each job row of a run gets an isolated dispatch
// queue job of its own, counting the crashes given, and the rows name it.
func testIsolateDispatch(t *testing.T, db *store.DB) {
	ws, accs, reqs, js := settleRun(t, db)
	old := accs[0].Job.QueueJobID
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		return tx.IsolateDispatch(ctx, js, 2)
	})
	seen := map[int64]bool{old: true}
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		rest, err := tx.FindJobsOfQueueJob(ctx, old)
		require.NoError(t, err)
		require.Empty(t, rest, "the shared job carries nothing")
		for i, r := range reqs {
			j, err := tx.FindJobByRequest(ctx, ws, r.ID)
			require.NoError(t, err)
			require.Equal(t, js[i].QueueJobID, j.QueueJobID)
			require.False(t, seen[j.QueueJobID], "a queue job of its own")
			seen[j.QueueJobID] = true
			require.Equal(t, notify.JobProcessing, j.Status, "the row is otherwise untouched")
			own, err := tx.FindJobsOfQueueJob(ctx, j.QueueJobID)
			require.NoError(t, err)
			require.Len(t, own, 1)
			require.Equal(t, r.ID, own[0].RequestID)
		}
		return nil
	})
	for _, j := range js {
		require.Equal(t, queueJob{"available", jobs.QueueIsolated, "dispatch", 2}, readQueueJob(t, db, j.QueueJobID))
	}
}

// testFindRunningQueueJobs: the running jobs of one queue under one
// worker process, by id; other queues, owners and states are left out.
func testFindRunningQueueJobs(t *testing.T, db *store.DB) {
	ws := Workspace(t, db)
	var ids []int64
	for range 5 {
		ids = append(ids, acceptNow(t, db, ws, 1)[0].Job.QueueJobID)
	}
	runningQueueJob(t, db, ids[0], "self", 2)
	runningQueueJob(t, db, ids[1], "self", 0) // another queue
	runningQueueJob(t, db, ids[2], "other", 2)
	runningQueueJob(t, db, ids[3], "self", 2)
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		_, err := tx.(*sqlstore.Tx).Conn().Exec(ctx, `UPDATE river_job SET queue = ? WHERE id IN (?, ?, ?, ?)`,
			jobs.QueueIsolated, ids[0], ids[2], ids[3], ids[4]) // ids[4] is available, not running
		return err
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.FindRunningQueueJobs(ctx, jobs.QueueIsolated, "self")
		require.NoError(t, err)
		require.Equal(t, []int64{ids[0], ids[3]}, got)
		got, err = tx.FindRunningQueueJobs(ctx, jobs.QueueIsolated, "nobody")
		require.NoError(t, err)
		require.Empty(t, got)
		return nil
	})
}
