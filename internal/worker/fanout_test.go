package worker

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/jobs"
)

// fanoutRun answers RunFanout with err and records FailFanout's calls.
type fanoutRun struct {
	err    error
	failed []error
}

func (f *fanoutRun) RunFanout(context.Context, string, string, int64, time.Duration) (bool, error) {
	return false, f.err
}

func (f *fanoutRun) FailFanout(_ context.Context, _, _ string, _ int64, cause error) error {
	f.failed = append(f.failed, cause)
	return nil
}

type permanentErr struct{}

func (permanentErr) Error() string   { return "over a bound" }
func (permanentErr) Permanent() bool { return true }

// A permanent failure fails the campaign on the first attempt and cancels
// the job (not retried); another failure is retried until the last
// attempt (issue 29).
func TestFanoutPermanentFailure(t *testing.T) {
	job := func(attempt int) *river.Job[jobs.Fanout] {
		return &river.Job[jobs.Fanout]{JobRow: &rivertype.JobRow{ID: 7, Attempt: attempt, MaxAttempts: jobs.FanoutMaxAttempts},
			Args: jobs.Fanout{CampaignID: "c", WorkspaceID: "w"}}
	}
	svc := &fanoutRun{err: permanentErr{}}
	err := (&Fanout{Service: svc}).Work(context.Background(), job(1))
	var cancel *river.JobCancelError
	require.ErrorAs(t, err, &cancel)
	require.Equal(t, []error{permanentErr{}}, svc.failed)

	svc = &fanoutRun{err: errors.New("database gone")}
	err = (&Fanout{Service: svc}).Work(context.Background(), job(1))
	require.EqualError(t, err, "database gone")
	require.NotErrorAs(t, err, &cancel)
	require.Empty(t, svc.failed, "retried, not failed yet")
}
