package storetest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/store"
	"github.com/notifyd/notifyd/internal/store/sqlstore"
)

// RescueQueueJobs gives the queue jobs of a dead worker process back to
// the queue (delivery.Engine.RescueOrphans, RescueAll).

// runQueueJob marks queue job qid running, fetched at fetchedAt by the
// worker processes owners (the last one fetched it last), as River does,
// in each dialect's River tables.
func runQueueJob(t *testing.T, db *store.DB, qid int64, fetchedAt time.Time, owners ...string) {
	t.Helper()
	var at, by any = fetchedAt, owners
	q := `UPDATE river_job SET state = 'running', attempt = 1, attempted_at = ?, attempted_by = ? WHERE id = ?`
	if db.Dialect == "sqlite" {
		// River's SQLite driver keeps times as text and attempted_by as JSONB.
		b, err := json.Marshal(owners)
		require.NoError(t, err)
		at, by = fetchedAt.UTC().Format("2006-01-02 15:04:05.000"), string(b)
		q = `UPDATE river_job SET state = 'running', attempt = 1, attempted_at = ?, attempted_by = jsonb(?) WHERE id = ?`
	}
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		n, err := tx.(*sqlstore.Tx).Conn().Exec(ctx, q, at, by, qid)
		require.Equal(t, int64(1), n)
		return err
	})
}

// queueJobState is a queue job's River state.
func queueJobState(t *testing.T, db *store.DB, qid int64) string {
	t.Helper()
	var st string
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		return tx.(*sqlstore.Tx).Conn().QueryRow(ctx, `SELECT CAST(state AS TEXT) FROM river_job WHERE id = ?`, qid).Scan(&st)
	})
	return st
}

func rescue(t *testing.T, db *store.DB, liveSince, runningBefore time.Time, self string, busy []int64) int {
	t.Helper()
	var n int
	update(t, db, func(ctx context.Context, tx notify.Tx) (err error) {
		n, err = tx.RescueQueueJobs(ctx, liveSince, runningBefore, self, busy)
		return err
	})
	return n
}

// testRescueQueueJobs: a running queue job fetched before runningBefore
// goes back to the queue when the process that fetched it last has no
// heartbeat since liveSince, or is this process (self) and does not work
// it (busy); in any workspace. A job fetched since, one of a live
// process, one of self that it works, and one not running stay as they
// are. The count answered is the jobs rescued.
func testRescueQueueJobs(t *testing.T, db *store.DB) {
	ws, other := Workspace(t, db), Workspace(t, db)
	liveSince := t0
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.NoError(t, tx.PutDispatchWorker(ctx, &notify.DispatchWorker{ID: "live", HeartbeatAt: liveSince}))
		return tx.PutDispatchWorker(ctx, &notify.DispatchWorker{ID: "stale", HeartbeatAt: liveSince.Add(-time.Millisecond)})
	})
	now := time.Now()
	old, runningBefore, recent := now.Add(-time.Hour), now.Add(-time.Minute), now
	queueJob := func(ws string) int64 {
		_, j := accepted(t, db, ws)
		require.NotZero(t, j.QueueJobID)
		return j.QueueJobID
	}
	type job struct {
		name    string
		qid     int64
		rescued bool
	}
	var jobs []job
	add := func(name string, ws string, rescued bool, fetchedAt time.Time, owners ...string) int64 {
		qid := queueJob(ws)
		if owners != nil {
			runQueueJob(t, db, qid, fetchedAt, owners...)
		}
		jobs = append(jobs, job{name, qid, rescued})
		return qid
	}
	add("a process without heartbeat", ws, true, old, "gone")
	add("another workspace's, of a process without heartbeat", other, true, old, "gone")
	add("a process whose heartbeat is older than liveSince", ws, true, old, "stale")
	add("fetched last by a dead process after a live one", ws, true, old, "live", "gone")
	add("self, not busy", ws, true, old, "me")
	add("a live process", ws, false, old, "live")
	add("fetched last by a live process after a dead one", ws, false, old, "gone", "live")
	add("a dead process, fetched since runningBefore", ws, false, recent, "gone")
	busy := add("self, busy", ws, false, old, "me")
	add("not running", ws, false, time.Time{})

	require.Equal(t, 5, rescue(t, db, liveSince, runningBefore, "me", []int64{busy, 1 << 40}))
	for _, j := range jobs {
		want := "running"
		if j.rescued || j.name == "not running" {
			want = "available"
		}
		require.Equal(t, want, queueJobState(t, db, j.qid), j.name)
	}
	require.Zero(t, rescue(t, db, liveSince, runningBefore, "me", []int64{busy}), "nothing left to rescue")

	// RescueAll's call: no self, no busy list, every job running before
	// a time in the future and no heartbeat counted live.
	require.Equal(t, 4, rescue(t, db, liveSince.Add(time.Hour), now.Add(time.Hour), "", nil))
	for _, j := range jobs {
		require.Equal(t, "available", queueJobState(t, db, j.qid), j.name)
	}
}
