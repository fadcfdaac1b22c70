package delivery

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/dispatch"
	"github.com/notifyd/notifyd/internal/notify"
)

// TestLiveRun: a request processing since less than the run bound plus the
// record grace belongs to a run that may still send; after that, the run
// is taken to be dead (its process crashed) and a new run may send.
func TestLiveRun(t *testing.T) {
	t.Parallel()
	e := New(Options{RunBound: 10 * time.Second})
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	started := now.Add(-5 * time.Second)
	job := &notify.Job{Status: notify.JobProcessing, StartedAt: &started}

	until := e.liveUntil(job)
	require.True(t, now.Before(until))
	require.Equal(t, 10*time.Second+recordGrace-5*time.Second, until.Sub(now))

	old := now.Add(-10*time.Second - recordGrace)
	require.False(t, now.Before(e.liveUntil(&notify.Job{Status: notify.JobProcessing, StartedAt: &old})), "a run past its bound is dead")
	require.True(t, e.liveUntil(&notify.Job{Status: notify.JobQueued, StartedAt: &started}).IsZero(), "a queued request has no live run")
	require.True(t, e.liveUntil(&notify.Job{Status: notify.JobProcessing}).IsZero())
}

// TestRunSlots: with every run slot taken, a job waits a while for one and
// then snoozes (no attempt spent, nothing claimed).
func TestRunSlots(t *testing.T) {
	t.Parallel()
	e := New(Options{MaxRuns: 1})
	e.runWait = 20 * time.Millisecond
	e.runs <- struct{}{} // the only slot, taken
	err := e.RunJob(context.Background(), 1)
	var snooze *dispatch.SnoozeError
	require.ErrorAs(t, err, &snooze)
	require.Equal(t, time.Second, snooze.After)
}

// TestOwnerDead: a processing request's earlier run is over when it was
// this process's and no run of it holds the row (it ended without
// recording), when this process is the only worker, or when the owner's
// heartbeat is older than DeadAfter; a live owner's run stays live.
func TestOwnerDead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	e := New(Options{})
	live := map[string]bool{"peer-alive": true}
	dead := func(e *Engine, owner, id string) bool {
		t.Helper()
		d, err := e.ownerDead(ctx, nil, &notify.Job{ID: id, RunOwner: owner, Status: notify.JobProcessing}, now, &live)
		require.NoError(t, err)
		return d
	}
	e.active.Store("held", true)
	require.False(t, dead(e, e.WorkerID(), "held"), "this process's run in progress")
	require.True(t, dead(e, e.WorkerID(), "ended"), "this process's run ended without recording")
	require.False(t, dead(e, "peer-alive", "x"), "a live peer's run")
	require.True(t, dead(e, "peer-gone", "x"), "a peer without a fresh heartbeat")
	require.False(t, dead(e, "", "x"), "an owner not recorded: the run bound decides")

	sole := New(Options{SoleWorker: true})
	require.True(t, dead(sole, "peer-alive", "x"), "the only worker: every other process is gone")
	require.True(t, dead(sole, "", "x"))
}
