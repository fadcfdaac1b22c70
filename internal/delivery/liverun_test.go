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
