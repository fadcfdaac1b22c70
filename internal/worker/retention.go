package worker

import (
	"context"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/notifyd/notifyd/internal/jobs"
	"github.com/notifyd/notifyd/internal/metrics"
	"github.com/notifyd/notifyd/internal/notify"
)

// Purger is the use case the retention job runs.
type Purger interface {
	PurgeExpired(ctx context.Context, r notify.Retention) (map[string]int, bool, error)
}

// RetentionBudget bounds one run of the purge, well below any job
// timeout; a run that has more to delete snoozes RetentionPause and goes
// on, so a purge of millions of rows is many short runs that a shutdown
// or a rescue never has to wait for.
const (
	RetentionBudget = 10 * time.Second
	RetentionPause  = time.Second
)

// Retention deletes expired data (NOTIFYD_RETENTION), audit entries
// (NOTIFYD_AUDIT_RETENTION) and week-old inbox stream events, and counts
// what went in
// notifyd_retention_deleted_total.
type Retention struct {
	river.WorkerDefaults[jobs.Retention]
	Service Purger
	Policy  notify.Retention
	Metrics *metrics.Retention
	Logger  *slog.Logger
}

// Work implements river.Worker.
func (w *Retention) Work(ctx context.Context, _ *river.Job[jobs.Retention]) error {
	// Even with both kept forever it runs: the inbox streams' event logs
	// are swept after a week whatever the policy.
	p := w.Policy
	if p.Budget == 0 {
		p.Budget = RetentionBudget
	}
	deleted, done, err := w.Service.PurgeExpired(ctx, p)
	deletedSome := false
	for table, n := range deleted {
		w.Metrics.Add(table, n)
		deletedSome = deletedSome || n > 0
	}
	if err != nil {
		return err
	}
	if deletedSome && w.Logger != nil {
		w.Logger.InfoContext(ctx, "retention purge", "deleted", deleted, "done", done)
	}
	if !done {
		return river.JobSnooze(RetentionPause)
	}
	return nil
}
