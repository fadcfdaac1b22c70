package sqlstore

import (
	"context"
	"strconv"
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
func (t deliveryTx) FindJobsOfQueueJob(ctx context.Context, queueJobID int64) ([]*notify.Job, error) {
	return queryAll(ctx, t.c, scanJob, `SELECT `+jobCols+` FROM notification_jobs
		WHERE queue_job_id = ? AND status IN `+openJobStatuses+` ORDER BY id`, queueJobID)
}

// ClaimRequests moves the requests of js to processing, unless they
// reached a final state meanwhile (a cancel), and marks their job rows
// processing with one more attempt, started at now. It returns the claimed
// requests and their updated job rows, in the same order; jobs whose
// request was not claimed are left out. The rows are matched by id
// through a VALUES list, which both planners take as a primary key lookup
// per row (a workspace_id = ? AND id IN (…) condition made SQLite scan the
// workspace's requests).
func (t deliveryTx) ClaimRequests(ctx context.Context, js []*notify.Job, now time.Time, owner string) ([]*notify.Request, []*notify.Job, error) {
	rows := make([][]any, len(js))
	for i, j := range js {
		rows[i] = []any{j.RequestID, j.WorkspaceID, ms(now)}
	}
	var reqs []*notify.Request
	err := t.updateFromValues(ctx, `UPDATE notification_requests SET status = 'processing', updated_at = CAST(v.column3 AS BIGINT) FROM `,
		rows, ` AS v WHERE notification_requests.id = v.column1 AND notification_requests.workspace_id = v.column2
		AND notification_requests.status IN ('queued', 'processing') RETURNING `+qualified("notification_requests", requestCols),
		func(r Rows) error {
			x, err := scanRequest(r)
			reqs = append(reqs, x)
			return err
		})
	if err != nil || len(reqs) == 0 {
		return nil, nil, err
	}
	rows = make([][]any, len(reqs))
	for i, r := range reqs {
		rows[i] = []any{r.ID, r.WorkspaceID, ms(now), owner}
	}
	byReq := make(map[string]*notify.Job, len(reqs))
	// A run taken over (the job row still processing: its run died before
	// recording) keeps the attempt number, so the vendor idempotency key
	// of its repeated send is the same.
	err = t.updateFromValues(ctx, `UPDATE notification_jobs SET status = 'processing',
		attempts_made = attempts_made + CASE WHEN notification_jobs.status = 'processing' THEN 0 ELSE 1 END,
		started_at = CAST(v.column3 AS BIGINT), next_retry_at = NULL, run_owner = v.column4 FROM `, rows,
		` AS v WHERE notification_jobs.request_id = v.column1 AND notification_jobs.workspace_id = v.column2
		RETURNING `+qualified("notification_jobs", jobCols),
		func(r Rows) error {
			j, err := scanJob(r)
			if err == nil {
				byReq[j.RequestID] = j
			}
			return err
		})
	if err != nil {
		return nil, nil, err
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

// qualified prefixes each column of cols with table.
func qualified(table, cols string) string {
	list := splitCols(cols)
	for i, c := range list {
		list[i] = table + "." + c
	}
	return strings.Join(list, ", ")
}

// updateChunk bounds the rows of one multi-row statement.
const updateChunk = 200

// SettleRequests saves the state of each request of rs that is still
// processing, its decisions included (those its dispatch added), and
// reports which were: a request canceled while its attempt was in flight
// keeps its canceled state.
func (t deliveryTx) SettleRequests(ctx context.Context, rs []*notify.Request) ([]bool, error) {
	settled := make([]bool, len(rs))
	idx := make(map[string]int, len(rs))
	for i, r := range rs {
		idx[r.ID] = i
	}
	rows := make([][]any, len(rs))
	for i, r := range rs {
		rows[i] = []any{r.ID, r.WorkspaceID, r.Status, ms(r.UpdatedAt), nullable(r.SelectedProviderID), nullable(r.SelectedMessageID),
			nullable(r.FinalErrorCode), nullable(r.FinalErrorMessage), encodeDecisions(r.Decisions, r.Category, r.RecipientID)}
	}
	err := t.updateFromValues(ctx, `UPDATE notification_requests SET status = v.column3, updated_at = CAST(v.column4 AS BIGINT),
		selected_provider_account_id = v.column5, selected_provider_message_id = v.column6, final_error_code = v.column7,
		final_error_message = v.column8, decisions = v.column9 FROM `, rows,
		` AS v WHERE notification_requests.id = v.column1 AND notification_requests.workspace_id = v.column2
		AND notification_requests.status = 'processing' RETURNING notification_requests.id`,
		func(r Rows) error {
			var id string
			err := r.Scan(&id)
			settled[idx[id]] = true
			return err
		})
	return settled, err
}

// SaveDecisions saves the decisions of each request of rs (issue 32):
// only the frequency cap calls it, whose count must be on record with the
// claim; the other dispatch decisions go with the settlement.
func (t deliveryTx) SaveDecisions(ctx context.Context, rs []*notify.Request) error {
	rows := make([][]any, len(rs))
	for i, r := range rs {
		rows[i] = []any{r.ID, r.WorkspaceID, encodeDecisions(r.Decisions, r.Category, r.RecipientID)}
	}
	return t.updateFromValues(ctx, `UPDATE notification_requests SET decisions = v.column3 FROM `, rows,
		` AS v WHERE notification_requests.id = v.column1 AND notification_requests.workspace_id = v.column2`, nil)
}

// MoveFallbackSteps saves the fallback step of each request of rs and
// the attempt ceiling of its job js[i]: only runs whose request moved to
// its next channel call it, so a request without a chain costs no
// statement (UpdateJobs leaves max_attempts alone).
func (t deliveryTx) MoveFallbackSteps(ctx context.Context, rs []*notify.Request, js []*notify.Job) error {
	rows := make([][]any, len(rs))
	for i, r := range rs {
		rows[i] = []any{r.ID, r.WorkspaceID, r.FallbackStep}
	}
	if err := t.updateFromValues(ctx, `UPDATE notification_requests SET fallback_step = CAST(v.column3 AS INTEGER) FROM `, rows,
		` AS v WHERE notification_requests.id = v.column1 AND notification_requests.workspace_id = v.column2`, nil); err != nil {
		return err
	}
	rows = make([][]any, len(js))
	for i, j := range js {
		rows[i] = []any{j.ID, j.WorkspaceID, j.MaxAttempts}
	}
	return t.updateFromValues(ctx, `UPDATE notification_jobs SET max_attempts = CAST(v.column3 AS INTEGER) FROM `, rows,
		` AS v WHERE notification_jobs.id = v.column1 AND notification_jobs.workspace_id = v.column2`, nil)
}

// UpdateJobs saves the mutable state of many job rows, queue job id
// included.
func (t deliveryTx) UpdateJobs(ctx context.Context, js []*notify.Job) error {
	rows := make([][]any, len(js))
	for i, j := range js {
		rows[i] = []any{j.ID, j.WorkspaceID, j.Status, j.AttemptsMade, msPtr(j.StartedAt), msPtr(j.FinishedAt), msPtr(j.NextRetryAt),
			nullable(j.LastErrorCode), nullable(j.LastErrorMessage), nullable(j.LastProviderAccountID), j.QueueJobID}
	}
	return t.updateFromValues(ctx, `UPDATE notification_jobs SET status = v.column3, attempts_made = CAST(v.column4 AS INTEGER),
		started_at = CAST(v.column5 AS BIGINT), finished_at = CAST(v.column6 AS BIGINT), next_retry_at = CAST(v.column7 AS BIGINT),
		last_error_code = v.column8, last_error_message = v.column9, last_provider_account_id = v.column10,
		queue_job_id = CAST(v.column11 AS BIGINT) FROM `, rows,
		` AS v WHERE notification_jobs.id = v.column1 AND notification_jobs.workspace_id = v.column2`, nil)
}

// updateFromValues runs head + (VALUES chunk) + tail for rows, in
// chunks sized by ladder, and hands each returned row to scan (nil: the
// statement returns nothing). Every value is passed as text, and the
// statement casts the numbers where it uses them: PostgreSQL types the
// columns of a VALUES list of parameters as text, and SQLite plans a
// VALUES list of uniform rows as the outer loop with a primary key lookup
// per row (a first row of casts made it scan the whole target table).
func (t deliveryTx) updateFromValues(ctx context.Context, head string, rows [][]any, tail string, scan func(Rows) error) error {
	if len(rows) == 0 {
		return nil
	}
	cols := len(rows[0])
	one := "(?" + strings.Repeat(", ?", cols-1) + ")"
	start := 0
	for _, size := range t.chunks(len(rows), updateChunk) {
		part := rows[start : start+size]
		start += size
		q := head + `(VALUES ` + one + strings.Repeat(", "+one, len(part)-1) + `)` + tail
		args := make([]any, 0, len(part)*cols+1)
		for _, r := range part {
			for _, v := range r {
				args = append(args, asText(v))
			}
		}
		args = append([]any{FreshPlan}, args...)
		if scan == nil {
			if _, err := t.c.Exec(ctx, q, args...); err != nil {
				return err
			}
			continue
		}
		rs, err := t.c.Query(ctx, q, args...)
		if err != nil {
			return err
		}
		for rs.Next() {
			if err := scan(rs); err != nil {
				rs.Close()
				return err
			}
		}
		rs.Close()
		if err := rs.Err(); err != nil {
			return err
		}
	}
	return nil
}

// asText renders a number as the text a VALUES list carries.
func asText(v any) any {
	switch x := v.(type) {
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case *int64:
		if x == nil {
			return nil
		}
		return strconv.FormatInt(*x, 10)
	}
	return v
}

// CreateEvents writes outbox rows in bulk.
func (t deliveryTx) CreateEvents(ctx context.Context, es []*notify.Event) error {
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
func (t deliveryTx) ScheduleDispatch(ctx context.Context, js []*notify.Job, at []time.Time, lanes []notify.Lane) error {
	if len(js) == 0 {
		return nil
	}
	params := make([]river.InsertManyParams, len(js))
	for i, j := range js {
		opts := &river.InsertOpts{MaxAttempts: jobs.DispatchMaxAttempts, Queue: jobs.DispatchQueue(lanes[i])}
		args := jobs.Dispatch{RequestID: j.RequestID, WorkspaceID: j.WorkspaceID, Trace: j.TraceParent}
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

// IsolateDispatch gives each job row a dispatch queue job of its own in
// the isolated queue, counting crashes already, and points the row at it.
func (t deliveryTx) IsolateDispatch(ctx context.Context, js []*notify.Job, crashes int) error {
	if len(js) == 0 {
		return nil
	}
	meta := jobs.CrashMetadata(crashes)
	params := make([]river.InsertManyParams, len(js))
	for i, j := range js {
		params[i] = river.InsertManyParams{Args: jobs.Dispatch{RequestID: j.RequestID, WorkspaceID: j.WorkspaceID},
			InsertOpts: &river.InsertOpts{Queue: jobs.QueueIsolated, MaxAttempts: jobs.DispatchMaxAttempts, Metadata: meta}}
	}
	ids, err := t.c.InsertJobs(ctx, params)
	if err != nil {
		return err
	}
	rows := make([][]any, len(js))
	for i, j := range js {
		j.QueueJobID = ids[i]
		rows[i] = []any{j.ID, j.WorkspaceID, ids[i]}
	}
	return t.updateFromValues(ctx, `UPDATE notification_jobs SET queue_job_id = CAST(v.column3 AS BIGINT) FROM `, rows,
		` AS v WHERE notification_jobs.id = v.column1 AND notification_jobs.workspace_id = v.column2`, nil)
}

// FindSuppressed answers which of addrs are on the workspace's
// suppression list.
func (t deliveryTx) FindSuppressed(ctx context.Context, workspaceID string, addrs []string) (map[string]bool, error) {
	out := map[string]bool{}
	start := 0
	for _, size := range t.chunks(len(addrs), updateChunk) {
		part := addrs[start : start+size]
		start += size
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
func (t deliveryTx) LockBreakers(ctx context.Context, ids []string) (map[string]*notify.BreakerRecord, error) {
	return t.breakers(ctx, `UPDATE breakers SET state = state WHERE provider_account_id IN `, ids, ` RETURNING `+breakerCols)
}

const breakerCols = `provider_account_id, state, failures, opened_until, trial_in_flight, updated_at`

// breakers runs head + (ids…) + tail and reads the breaker rows it
// returns, by account id.
func (t deliveryTx) breakers(ctx context.Context, head string, ids []string, tail string) (map[string]*notify.BreakerRecord, error) {
	out := map[string]*notify.BreakerRecord{}
	if len(ids) == 0 {
		return out, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	bs, err := queryAll(ctx, t.c, scanBreaker, head+`(?`+strings.Repeat(", ?", len(ids)-1)+`)`+tail, args...)
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
func (t deliveryTx) CloseBreakers(ctx context.Context, ids []string, now time.Time) error {
	args := []any{ms(now)}
	for _, id := range ids {
		args = append(args, id)
	}
	_, err := t.c.Exec(ctx, `UPDATE breakers SET state = 'CLOSED', failures = 0, opened_until = 0, trial_in_flight = FALSE,
		updated_at = ? WHERE provider_account_id IN (?`+strings.Repeat(", ?", len(ids)-1)+`)
		AND (state <> 'CLOSED' OR failures <> 0 OR trial_in_flight)`, args...)
	return err
}

// RescueQueueJobs makes every running queue job whose worker process has
// no heartbeat at or after liveSince, and that was fetched before
// runningBefore, available again at once (issue 16: a dead process's
// jobs run again within seconds, not after River's fixed rescue time),
// counting the crash in the job (jobs.CrashesKey).
func (t deliveryTx) RescueQueueJobs(ctx context.Context, liveSince, runningBefore time.Time, self string, busy []int64) (int, error) {
	if busy == nil {
		busy = []int64{}
	}
	return t.c.RescueJobs(ctx, Rescue{LiveSince: ms(liveSince), RunningBefore: runningBefore, Self: self, Busy: busy,
		CrashesKey: jobs.CrashesKey, IsolateAt: jobs.IsolateAfterCrashes, IsolateQueue: jobs.QueueIsolated})
}

// FindRunningQueueJobs lists the queue jobs of queue that the database
// shows running under worker process owner.
func (t deliveryTx) FindRunningQueueJobs(ctx context.Context, queue, owner string) ([]int64, error) {
	return t.c.RunningJobs(ctx, queue, owner)
}

// insertBatchJobs inserts the dispatch_batch queue jobs of n requests
// queued again (a replay, a retry) in the queue of lane: one per
// DispatchBatchMax, like a group commit's; request i goes to the job at
// i/DispatchBatchMax. A run finds its requests through their job rows.
func (t deliveryTx) insertBatchJobs(ctx context.Context, n int, lane notify.Lane) ([]int64, error) {
	var params []river.InsertManyParams
	for start := 0; start < n; start += jobs.DispatchBatchMax {
		params = append(params, river.InsertManyParams{Args: jobs.DispatchBatch{Count: min(jobs.DispatchBatchMax, n-start)},
			InsertOpts: &river.InsertOpts{MaxAttempts: jobs.DispatchMaxAttempts, Queue: jobs.DispatchQueue(lane)}})
	}
	return t.c.InsertJobs(ctx, params)
}
