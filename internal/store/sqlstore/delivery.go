package sqlstore

import (
	"context"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"github.com/notifyd/notifyd/internal/jobs"
	"github.com/notifyd/notifyd/internal/notify"
)

// The verbs of batch delivery: a run claims every request of its queue
// job with a few statements, and records their outcomes together with
// multi-row statements, whatever the number of requests.

// openJobStatuses are the job states a run may still act on.
const openJobStatuses = `('scheduled', 'queued', 'retrying', 'processing')`

// FindJobsOfQueueJob lists the open job rows that queue job queueJobID
// carries.
func (t *Tx) FindJobsOfQueueJob(ctx context.Context, queueJobID int64) ([]*notify.Job, error) {
	return queryAll(ctx, t.c, scanJob, `SELECT `+jobCols+` FROM notification_jobs
		WHERE queue_job_id = ? AND status IN `+openJobStatuses+` ORDER BY id`, queueJobID)
}

// ClaimRequests moves the requests of js to processing, unless they
// reached a final state meanwhile (a cancel), and marks their job rows
// processing with one more attempt, started at now. It returns the claimed
// requests and updates the claimed job rows in js; jobs whose request was
// not claimed are left out of the answer.
func (t *Tx) ClaimRequests(ctx context.Context, js []*notify.Job, now time.Time) ([]*notify.Request, []*notify.Job, error) {
	byWS := map[string][]*notify.Job{}
	var order []string
	for _, j := range js {
		if byWS[j.WorkspaceID] == nil {
			order = append(order, j.WorkspaceID)
		}
		byWS[j.WorkspaceID] = append(byWS[j.WorkspaceID], j)
	}
	var reqs []*notify.Request
	var jobsOut []*notify.Job
	for _, ws := range order {
		group := byWS[ws]
		for start := 0; start < len(group); start += updateChunk {
			part := group[start:min(start+updateChunk, len(group))]
			args := []any{ms(now), ws}
			for _, j := range part {
				args = append(args, j.RequestID)
			}
			rs, err := queryAll(ctx, t.c, scanRequest, `UPDATE notification_requests SET status = 'processing', updated_at = ?
				WHERE workspace_id = ? AND id IN (?`+strings.Repeat(", ?", len(part)-1)+`) AND status IN ('queued', 'processing')
				RETURNING `+requestCols, args...)
			if err != nil {
				return nil, nil, err
			}
			if len(rs) == 0 {
				continue
			}
			args = []any{ms(now), ws}
			for _, r := range rs {
				args = append(args, r.ID)
			}
			claimed, err := queryAll(ctx, t.c, scanJob, `UPDATE notification_jobs SET status = 'processing', attempts_made = attempts_made + 1,
				started_at = ?, next_retry_at = NULL WHERE workspace_id = ? AND request_id IN (?`+strings.Repeat(", ?", len(rs)-1)+`)
				RETURNING `+jobCols, args...)
			if err != nil {
				return nil, nil, err
			}
			reqs = append(reqs, rs...)
			jobsOut = append(jobsOut, claimed...)
		}
	}
	// One order for both answers: by request id.
	byReq := make(map[string]*notify.Job, len(jobsOut))
	for _, j := range jobsOut {
		byReq[j.RequestID] = j
	}
	outJobs := make([]*notify.Job, 0, len(reqs))
	outReqs := reqs[:0]
	for _, r := range reqs {
		if j := byReq[r.ID]; j != nil {
			outReqs = append(outReqs, r)
			outJobs = append(outJobs, j)
		}
	}
	return outReqs, outJobs, nil
}

// updateChunk bounds the rows of one multi-row statement.
const updateChunk = 200

// SettleRequests saves the state of each request of rs that is still
// processing, and reports which were: a request canceled while its attempt
// was in flight keeps its canceled state.
func (t *Tx) SettleRequests(ctx context.Context, rs []*notify.Request) ([]bool, error) {
	settled := make([]bool, len(rs))
	idx := make(map[string]int, len(rs))
	for i, r := range rs {
		idx[r.ID] = i
	}
	for start := 0; start < len(rs); start += updateChunk {
		part := rs[start:min(start+updateChunk, len(rs))]
		rows := make([][]any, len(part))
		for i, r := range part {
			rows[i] = []any{r.ID, r.WorkspaceID, r.Status, ms(r.UpdatedAt), nullable(r.SelectedProviderID), nullable(r.SelectedMessageID),
				nullable(r.FinalErrorCode), nullable(r.FinalErrorMessage)}
		}
		ids, err := t.updateFromValues(ctx, `UPDATE notification_requests SET status = v.column3, updated_at = v.column4,
			selected_provider_account_id = v.column5, selected_provider_message_id = v.column6, final_error_code = v.column7,
			final_error_message = v.column8 FROM `, requestSettleTypes, rows,
			` AS v WHERE notification_requests.id = v.column1 AND notification_requests.workspace_id = v.column2
			AND notification_requests.status = 'processing' RETURNING notification_requests.id`)
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			settled[idx[id]] = true
		}
	}
	return settled, nil
}

var requestSettleTypes = []string{"TEXT", "TEXT", "TEXT", "BIGINT", "TEXT", "TEXT", "TEXT", "TEXT"}

// UpdateJobs saves the mutable state of many job rows, queue job id
// included.
func (t *Tx) UpdateJobs(ctx context.Context, js []*notify.Job) error {
	for start := 0; start < len(js); start += updateChunk {
		part := js[start:min(start+updateChunk, len(js))]
		rows := make([][]any, len(part))
		for i, j := range part {
			rows[i] = []any{j.ID, j.WorkspaceID, j.Status, j.AttemptsMade, msPtr(j.StartedAt), msPtr(j.FinishedAt), msPtr(j.NextRetryAt),
				nullable(j.LastErrorCode), nullable(j.LastErrorMessage), nullable(j.LastProviderAccountID), j.QueueJobID}
		}
		if _, err := t.updateFromValues(ctx, `UPDATE notification_jobs SET status = v.column3, attempts_made = v.column4,
			started_at = v.column5, finished_at = v.column6, next_retry_at = v.column7, last_error_code = v.column8,
			last_error_message = v.column9, last_provider_account_id = v.column10, queue_job_id = v.column11 FROM `, jobUpdateTypes, rows,
			` AS v WHERE notification_jobs.id = v.column1 AND notification_jobs.workspace_id = v.column2 RETURNING notification_jobs.id`); err != nil {
			return err
		}
	}
	return nil
}

var jobUpdateTypes = []string{"TEXT", "TEXT", "TEXT", "INTEGER", "BIGINT", "BIGINT", "BIGINT", "TEXT", "TEXT", "TEXT", "BIGINT"}

// updateFromValues runs head + (VALUES rows) + tail and returns the first
// column of the rows it returns. The first row casts each value to its
// column's type: PostgreSQL types a VALUES column from its first typed
// value, and would otherwise take every parameter as text.
func (t *Tx) updateFromValues(ctx context.Context, head string, types []string, rows [][]any, tail string) ([]string, error) {
	var b strings.Builder
	b.WriteString(head)
	b.WriteString(`(VALUES (`)
	for i, typ := range types {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("CAST(? AS " + typ + ")")
	}
	b.WriteString(")")
	plain := ", (?" + strings.Repeat(", ?", len(types)-1) + ")"
	args := make([]any, 0, len(rows)*len(types))
	for i, r := range rows {
		if i > 0 {
			b.WriteString(plain)
		}
		args = append(args, r...)
	}
	b.WriteString(")")
	b.WriteString(tail)
	rs, err := t.c.Query(ctx, b.String(), args...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var out []string
	for rs.Next() {
		var id string
		if err := rs.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rs.Err()
}

// CreateEvents writes outbox rows in bulk.
func (t *Tx) CreateEvents(ctx context.Context, es []*notify.Event) error {
	rows := make([][]any, len(es))
	for i, e := range es {
		rows[i] = []any{e.ID, e.WorkspaceID, e.Type, e.RequestID, toJSON(e.Payload), ms(e.CreatedAt)}
	}
	return t.insertRows(ctx, "events", eventColList, rows, 500)
}

var eventColList = []string{"id", "workspace_id", "type", "request_id", "payload", "created_at"}

// ScheduleDispatch inserts one queue job of its own for each job row of
// js, due at at[i] (at once when zero), and sets the rows' QueueJobID;
// the caller saves the rows (UpdateJobs) in this transaction. A request
// that must retry, or wait, leaves the queue job it shared. A due time
// within River's scheduler interval is carried in the job's arguments
// (the worker snoozes until it), not as a scheduled time the scheduler
// would honour only at its next pass.
func (t *Tx) ScheduleDispatch(ctx context.Context, js []*notify.Job, at []time.Time) error {
	if len(js) == 0 {
		return nil
	}
	params := make([]river.InsertManyParams, len(js))
	for i, j := range js {
		opts := &river.InsertOpts{MaxAttempts: jobs.DispatchMaxAttempts}
		args := jobs.Dispatch{RequestID: j.RequestID, WorkspaceID: j.WorkspaceID}
		if !at[i].IsZero() {
			args.NotBefore = at[i].UnixMilli()
			if time.Until(at[i]) > jobs.SchedulerInterval {
				opts.ScheduledAt = at[i]
			}
		}
		params[i] = river.InsertManyParams{Args: args, InsertOpts: opts}
	}
	ids, err := t.c.InsertJobs(ctx, params)
	if err != nil {
		return err
	}
	for i, j := range js {
		j.QueueJobID = ids[i]
	}
	return nil
}

// FindSuppressed answers which of addrs are on the workspace's
// suppression list.
func (t *Tx) FindSuppressed(ctx context.Context, workspaceID string, addrs []string) (map[string]bool, error) {
	out := map[string]bool{}
	for start := 0; start < len(addrs); start += updateChunk {
		part := addrs[start:min(start+updateChunk, len(addrs))]
		args := []any{workspaceID}
		for _, a := range part {
			args = append(args, a)
		}
		rows, err := t.c.Query(ctx, `SELECT address FROM suppressions WHERE workspace_id = ? AND address IN (?`+
			strings.Repeat(", ?", len(part)-1)+`)`, args...)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var a string
			if err := rows.Scan(&a); err != nil {
				rows.Close()
				return nil, err
			}
			out[a] = true
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// LockBreakers reads the shared circuit state of accounts ids holding
// their rows' write locks to the end of the transaction, so outcomes
// recorded by concurrent runs add up instead of overwriting each other.
func (t *Tx) LockBreakers(ctx context.Context, ids []string) (map[string]*notify.BreakerRecord, error) {
	out := map[string]*notify.BreakerRecord{}
	if len(ids) == 0 {
		return out, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	bs, err := queryAll(ctx, t.c, scanBreaker, `UPDATE breakers SET state = state WHERE provider_account_id IN (?`+
		strings.Repeat(", ?", len(ids)-1)+`) RETURNING provider_account_id, state, failures, opened_until, trial_in_flight, updated_at`, args...)
	for _, b := range bs {
		out[b.ProviderAccountID] = b
	}
	return out, err
}

func scanBreaker(row Row) (*notify.BreakerRecord, error) {
	var b notify.BreakerRecord
	var until, upd int64
	if err := row.Scan(&b.ProviderAccountID, &b.State, &b.Failures, &until, &b.TrialInFlight, &upd); err != nil {
		return nil, err
	}
	b.OpenedUntil, b.UpdatedAt = fromMs(until), fromMs(upd)
	return &b, nil
}

// CloseBreakers closes the circuits of accounts ids (a run whose sends
// through them all succeeded), writing only the rows that are not closed
// with no failures already: usually none, so a healthy provider's row is
// neither rewritten nor locked by every delivery.
func (t *Tx) CloseBreakers(ctx context.Context, ids []string, now time.Time) error {
	args := []any{ms(now)}
	for _, id := range ids {
		args = append(args, id)
	}
	_, err := t.c.Exec(ctx, `UPDATE breakers SET state = 'CLOSED', failures = 0, opened_until = 0, trial_in_flight = FALSE,
		updated_at = ? WHERE provider_account_id IN (?`+strings.Repeat(", ?", len(ids)-1)+`)
		AND (state <> 'CLOSED' OR failures <> 0 OR trial_in_flight)`, args...)
	return err
}
