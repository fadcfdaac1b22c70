package sqlstore

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	"github.com/notifyd/notifyd/internal/jobs"
	"github.com/notifyd/notifyd/internal/notify"
)

// ReplayDeadLetters takes the selected dead letters out of the queue with
// one DELETE … RETURNING (the conditional write: a concurrent replay of
// the same item waits for this one's row lock on PostgreSQL, or for the
// one writer on SQLite, and then finds the row gone), then queues their
// job rows again in shared dispatch_batch jobs and moves their requests
// from failed back to queued.
func (t requestTx) ReplayDeadLetters(ctx context.Context, workspaceID string, f notify.DeadLetterFilter, budget int, now time.Time) ([]*notify.DeadLetter, error) {
	var where strings.Builder
	args := []any{workspaceID}
	where.WriteString(`workspace_id = ?`)
	add := func(cond string, v any) {
		where.WriteString(cond)
		args = append(args, v)
	}
	if f.JobID != "" {
		add(` AND job_id = ?`, f.JobID)
	}
	if f.Channel != "" {
		add(` AND channel = ?`, string(f.Channel))
	}
	if f.From != nil {
		add(` AND failed_at >= ?`, ms(*f.From))
	}
	if f.To != nil {
		add(` AND failed_at <= ?`, ms(*f.To))
	}
	// Only an item whose job still is a dead letter: the job row is the
	// truth the dead letter mirrors. The failure code is the job's last
	// one (failedReason only quotes it).
	where.WriteString(` AND EXISTS (SELECT 1 FROM notification_jobs j WHERE j.id = dead_letters.job_id
		AND j.workspace_id = dead_letters.workspace_id AND j.status = 'dead_letter'`)
	if f.FailureCode != "" {
		add(` AND j.last_error_code = ?`, string(f.FailureCode))
	}
	where.WriteString(`)`)
	ds, err := queryAll(ctx, t.c, scanDeadLetter, `DELETE FROM dead_letters WHERE `+where.String()+` RETURNING `+deadLetterCols, args...)
	if err != nil || len(ds) == 0 {
		return nil, err
	}
	slices.SortFunc(ds, func(a, b *notify.DeadLetter) int {
		return cmp.Or(a.FailedAt.Compare(b.FailedAt), strings.Compare(a.ID, b.ID))
	})

	// A replay is an operator's action, waited for: transactional.
	ids, err := t.insertBatchJobs(ctx, len(ds), notify.LaneTransactional)
	if err != nil {
		return nil, err
	}
	jobRows := make([][]any, len(ds))
	reqRows := make([][]any, len(ds))
	for i, d := range ds {
		jobRows[i] = []any{d.JobID, d.WorkspaceID, ids[i/jobs.DispatchBatchMax], ms(now), budget}
		reqRows[i] = []any{d.RequestID, d.WorkspaceID, ms(now)}
	}
	// The attempt count goes on (a fresh budget raises the ceiling), so
	// the next attempt has a number, and a vendor idempotency key, of its
	// own; the last error stays until a success clears it.
	if err := t.updateFromValues(ctx, `UPDATE notification_jobs SET status = 'queued', queue_job_id = CAST(v.column3 AS BIGINT),
		queued_at = CAST(v.column4 AS BIGINT), max_attempts = notification_jobs.attempts_made + CAST(v.column5 AS INTEGER),
		started_at = NULL, finished_at = NULL, next_retry_at = NULL FROM `, jobRows,
		` AS v WHERE notification_jobs.id = v.column1 AND notification_jobs.workspace_id = v.column2
		AND notification_jobs.status = 'dead_letter'`, nil); err != nil {
		return nil, err
	}
	if err := t.updateFromValues(ctx, `UPDATE notification_requests SET status = 'queued', updated_at = CAST(v.column3 AS BIGINT),
		final_error_code = NULL, final_error_message = NULL FROM `, reqRows,
		` AS v WHERE notification_requests.id = v.column1 AND notification_requests.workspace_id = v.column2
		AND notification_requests.status = 'failed'`, nil); err != nil {
		return nil, err
	}
	return ds, nil
}
