package service

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
)

// TestLiveRun: a request processing since less than the run bound plus the
// record grace belongs to a run that may still send; after that, the run
// is taken to be dead (its process crashed) and a new run may send.
func TestLiveRun(t *testing.T) {
	t.Parallel()
	s := New(Options{DispatchRunBound: 10 * time.Second})
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	started := now.Add(-5 * time.Second)
	processing := &notify.Request{Status: notify.StatusProcessing}
	job := &notify.Job{StartedAt: &started}

	snooze := s.liveRun(processing, job, now)
	require.NotNil(t, snooze)
	require.Equal(t, 10*time.Second+recordGrace-5*time.Second+time.Second, snooze.After)

	old := now.Add(-10*time.Second - recordGrace)
	require.Nil(t, s.liveRun(processing, &notify.Job{StartedAt: &old}, now), "a run past its bound is dead")
	require.Nil(t, s.liveRun(&notify.Request{Status: notify.StatusQueued}, job, now), "a queued request has no live run")
	require.Nil(t, s.liveRun(processing, &notify.Job{}, now))
}
