package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/store"
	"github.com/notifyd/notifyd/internal/store/sqlstore"
)

// countRows counts rows of table in a read transaction.
func countRows(t *testing.T, db *store.DB, table string) int {
	t.Helper()
	var n int
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		return tx.(*sqlstore.Tx).Conn().QueryRow(ctx, `SELECT COUNT(*) FROM `+table).Scan(&n)
	})
	return n
}

func newRequest(ws, key string) *notify.Request {
	return &notify.Request{ID: id(), WorkspaceID: ws, Source: notify.SourceAPI, Channel: notify.ChannelSMS, Status: notify.StatusQueued,
		RecipientAddress: "01012345678", Text: "hi", IdempotencyKey: key, Metadata: map[string]string{"k": "v"},
		RequestedAt: t0, UpdatedAt: t0}
}

// testAcceptRollback: a request and its queue job are written in one
// transaction: rolled back, neither the row nor the River job remains;
// committed, both do, with the job row naming the River job.
func testAcceptRollback(t *testing.T, db *store.DB) {
	ws := Workspace(t, db)
	ctx := context.Background()
	jobsBefore := countRows(t, db, "river_job")
	boom := notify.Invalid("boom")
	for _, run := range []func(context.Context, func(notify.Tx) error) error{db.Update, db.Batch} {
		err := run(ctx, func(tx notify.Tx) error {
			require.NoError(t, tx.AcceptRequests(ctx, []*notify.Accept{{Request: newRequest(ws, ""), MaxAttempts: 3}}, t0))
			return boom
		})
		require.ErrorIs(t, err, boom)
	}
	require.Equal(t, 0, countRows(t, db, "notification_requests"), "no request row after rollback")
	require.Equal(t, jobsBefore, countRows(t, db, "river_job"), "no River job after rollback")
	require.Equal(t, 0, countRows(t, db, "notification_jobs"))

	sched := t0.Add(time.Hour)
	a := &notify.Accept{Request: newRequest(ws, "key-1"), MaxAttempts: 3}
	b := &notify.Accept{Request: newRequest(ws, ""), MaxAttempts: 3}
	b.Request.ScheduledAt = &sched
	dup := &notify.Accept{Request: newRequest(ws, "key-1"), MaxAttempts: 3}
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		return tx.AcceptRequests(ctx, []*notify.Accept{a, b, dup}, t0)
	})
	require.Equal(t, 2, countRows(t, db, "notification_requests"))
	require.Equal(t, jobsBefore+2, countRows(t, db, "river_job"))
	require.NotZero(t, a.Job.QueueJobID)
	require.Equal(t, notify.JobQueued, a.Job.Status)
	require.Equal(t, notify.JobScheduled, b.Job.Status)
	require.Equal(t, a.Request.ID, dup.Existing.ID, "same key in one call deduplicates")
	require.Equal(t, a.Job.QueueJobID, dup.ExistingJob.QueueJobID)
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.FindRequest(ctx, ws, a.Request.ID)
		require.NoError(t, err)
		require.Equal(t, map[string]string{"k": "v"}, got.Metadata)
		require.Equal(t, "key-1", got.IdempotencyKey)
		j, err := tx.FindJobByRequest(ctx, ws, b.Request.ID)
		require.NoError(t, err)
		require.Equal(t, b.Job.QueueJobID, j.QueueJobID)
		require.Equal(t, sched, *j.ScheduledAt)
		_, err = tx.FindRequest(ctx, Workspace0, a.Request.ID)
		require.ErrorIs(t, err, notify.ErrNotFound, "another workspace sees nothing")
		return nil
	})
	// A later call with the same key finds the committed request and job.
	again := &notify.Accept{Request: newRequest(ws, "key-1"), MaxAttempts: 3}
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		return tx.AcceptRequests(ctx, []*notify.Accept{again}, t0)
	})
	require.Equal(t, a.Request.ID, again.Existing.ID)
	require.Equal(t, a.Job.QueueJobID, again.ExistingJob.QueueJobID)
	require.Equal(t, jobsBefore+2, countRows(t, db, "river_job"))
}

// Workspace0 is an id no test creates.
const Workspace0 = "00000000-0000-0000-0000-000000000000"
