package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/store"
)

// testFindJob: a job is found by its id within its workspace only, and an
// unknown id is ErrNotFound.
func testFindJob(t *testing.T, db *store.DB) {
	ws, other := Workspace(t, db), Workspace(t, db)
	_, j := accepted(t, db, ws)
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.FindJob(ctx, ws, j.ID)
		require.NoError(t, err)
		require.Equal(t, j.ID, got.ID)
		require.Equal(t, j.RequestID, got.RequestID)
		require.Equal(t, j.QueueJobID, got.QueueJobID)
		require.Equal(t, notify.JobQueued, got.Status)
		require.Equal(t, 3, got.MaxAttempts)
		_, err = tx.FindJob(ctx, other, j.ID)
		require.ErrorIs(t, err, notify.ErrNotFound, "another workspace's job")
		_, err = tx.FindJob(ctx, ws, id())
		require.ErrorIs(t, err, notify.ErrNotFound)
		return nil
	})
}

// testUpdateJob: every mutable field round-trips, cleared fields read back
// empty, and an update aimed at another workspace changes nothing.
func testUpdateJob(t *testing.T, db *store.DB) {
	ws, other := Workspace(t, db), Workspace(t, db)
	_, j := accepted(t, db, ws)
	started, next, finished := t0.Add(time.Second), t0.Add(time.Minute), t0.Add(2*time.Minute)
	j.Status, j.AttemptsMade, j.StartedAt, j.NextRetryAt = notify.JobRetrying, 2, &started, &next
	j.LastErrorCode, j.LastErrorMessage, j.LastProviderAccountID = "PROVIDER_TIMEOUT", "timed out", id()
	update(t, db, func(ctx context.Context, tx notify.Tx) error { return tx.UpdateJob(ctx, j) })
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.FindJob(ctx, ws, j.ID)
		require.NoError(t, err)
		require.Equal(t, notify.JobRetrying, got.Status)
		require.Equal(t, 2, got.AttemptsMade)
		require.Equal(t, started, *got.StartedAt)
		require.Equal(t, next, *got.NextRetryAt)
		require.Nil(t, got.FinishedAt)
		require.Equal(t, "PROVIDER_TIMEOUT", got.LastErrorCode)
		require.Equal(t, "timed out", got.LastErrorMessage)
		require.Equal(t, j.LastProviderAccountID, got.LastProviderAccountID)
		return nil
	})

	j.Status, j.NextRetryAt, j.FinishedAt, j.LastErrorCode, j.LastErrorMessage = notify.JobCompleted, nil, &finished, "", ""
	update(t, db, func(ctx context.Context, tx notify.Tx) error { return tx.UpdateJob(ctx, j) })
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.FindJob(ctx, ws, j.ID)
		require.NoError(t, err)
		require.Equal(t, notify.JobCompleted, got.Status)
		require.Nil(t, got.NextRetryAt)
		require.Equal(t, finished, *got.FinishedAt)
		require.Empty(t, got.LastErrorCode)
		require.Empty(t, got.LastErrorMessage)
		return nil
	})

	foreign := *j
	foreign.WorkspaceID, foreign.Status = other, notify.JobCanceled
	ctx := context.Background()
	err := db.Update(ctx, func(tx notify.Tx) error { return tx.UpdateJob(ctx, &foreign) })
	require.ErrorIs(t, err, notify.ErrNotFound, "a job of another workspace is not updated")
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.FindJob(ctx, ws, j.ID)
		require.NoError(t, err)
		require.Equal(t, notify.JobCompleted, got.Status)
		return nil
	})
}

// testCancelScheduledWork: canceling an accepted request's queue job succeeds
// and may be repeated, and an id the queue does not know is not an error
// (a job River already removed is as good as canceled).
func testCancelScheduledWork(t *testing.T, db *store.DB) {
	ws := Workspace(t, db)
	_, j := accepted(t, db, ws)
	require.NotZero(t, j.QueueJobID)
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.NoError(t, tx.CancelScheduledWork(ctx, j.QueueJobID))
		return tx.CancelScheduledWork(ctx, j.QueueJobID)
	})
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		return tx.CancelScheduledWork(ctx, j.QueueJobID+1_000_000)
	})
}

// testLockWorkspace: an existing workspace locks, an unknown one is
// ErrNotFound, and a second transaction locking the same workspace waits
// until the first one ends.
func testLockWorkspace(t *testing.T, db *store.DB) {
	ws := Workspace(t, db)
	ctx := context.Background()
	require.ErrorIs(t, db.Update(ctx, func(tx notify.Tx) error { return tx.LockWorkspace(ctx, id()) }), notify.ErrNotFound)

	locked, release, second := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	firstEnded := make(chan time.Time, 1) // when the first transaction was about to commit
	go func() {
		var ended time.Time
		_ = db.Update(ctx, func(tx notify.Tx) error {
			if err := tx.LockWorkspace(ctx, ws); err != nil {
				return err
			}
			close(locked)
			<-release
			ended = time.Now()
			return nil
		})
		firstEnded <- ended
	}()
	<-locked
	var secondLocked time.Time
	go func() {
		second <- db.Update(ctx, func(tx notify.Tx) error {
			err := tx.LockWorkspace(ctx, ws)
			secondLocked = time.Now()
			return err
		})
	}()
	select {
	case err := <-second:
		t.Fatalf("the second lock returned (%v) while the first transaction held it", err)
	case <-time.After(200 * time.Millisecond):
	}
	close(release)
	require.NoError(t, <-second)
	require.False(t, secondLocked.Before(<-firstEnded), "the second lock was taken before the first transaction ended")
}
