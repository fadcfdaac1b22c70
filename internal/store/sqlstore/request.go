package sqlstore

import (
	"context"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"github.com/notifyd/notifyd/internal/jobs"
	"github.com/notifyd/notifyd/internal/notify"
)

const requestCols = `id, workspace_id, api_key_id, source, channel, status, recipient_address, recipient_name, title, text, html,
	template_code, template_variables, vendor_template_id, sender_profile_key, headers, metadata, preferred_provider_ids,
	idempotency_key, campaign_id, requested_at, scheduled_at, updated_at, selected_provider_account_id,
	selected_provider_message_id, final_error_code, final_error_message, fallback, fallback_step, lane, recipient_id, category, decisions, inapp, test`

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func jsonOrNil(v any, empty bool) *string {
	if empty {
		return nil
	}
	s := toJSON(v)
	return &s
}

func requestArgs(r *notify.Request) []any {
	return []any{r.ID, r.WorkspaceID, nullable(r.APIKeyID), r.Source, string(r.Channel), r.Status, r.RecipientAddress,
		nullable(r.RecipientName), nullable(r.Title), nullable(r.Text), nullable(r.HTML), nullable(r.TemplateCode),
		jsonOrNil(r.TemplateVariables, len(r.TemplateVariables) == 0), nullable(r.VendorTemplateID), nullable(r.SenderProfileKey),
		jsonOrNil(r.Headers, len(r.Headers) == 0), jsonOrNil(r.Metadata, len(r.Metadata) == 0),
		jsonOrNil(r.PreferredProviderIDs, len(r.PreferredProviderIDs) == 0), nullable(r.IdempotencyKey), nullable(r.CampaignID),
		ms(r.RequestedAt), msPtr(r.ScheduledAt), ms(r.UpdatedAt), nullable(r.SelectedProviderID), nullable(r.SelectedMessageID),
		nullable(r.FinalErrorCode), nullable(r.FinalErrorMessage), jsonOrNil(r.StoredFallback(), r.Fallback == nil), r.FallbackStep, nullable(string(r.MarkedLane)),
		nullable(r.RecipientID), nullable(r.Category), encodeDecisions(r.Decisions, r.Category, r.RecipientID), jsonOrNil(r.InApp, r.InApp == nil), r.Test}
}

func scanRequest(row Row) (*notify.Request, error) {
	var s requestScan
	if err := row.Scan(s.dests()...); err != nil {
		return nil, err
	}
	return s.request()
}

// requestScan holds the columns of requestCols as scanned, so a row that
// carries them after other columns can be scanned in one call (dests,
// then request).
type requestScan struct {
	r                                                                             notify.Request
	apiKey, name, title, text, html, tcode, tvars, vtid, spk, headers, meta, pref *string
	idem, camp, sel, selMsg, fcode, fmsg, fallback, lane, rid, cat, decisions     *string
	inapp                                                                         *string
	ch                                                                            string
	req, upd                                                                      int64
	sched                                                                         *int64
}

func (s *requestScan) dests() []any {
	r := &s.r
	return []any{&r.ID, &r.WorkspaceID, &s.apiKey, &r.Source, &s.ch, &r.Status, &r.RecipientAddress, &s.name, &s.title, &s.text, &s.html,
		&s.tcode, &s.tvars, &s.vtid, &s.spk, &s.headers, &s.meta, &s.pref, &s.idem, &s.camp, &s.req, &s.sched, &s.upd, &s.sel, &s.selMsg,
		&s.fcode, &s.fmsg, &s.fallback, &r.FallbackStep, &s.lane, &s.rid, &s.cat, &s.decisions, &s.inapp, &r.Test}
}

// request is the scanned request.
func (s *requestScan) request() (*notify.Request, error) {
	r := s.r
	r.APIKeyID, r.Channel, r.RecipientName, r.Title, r.Text, r.HTML = str(s.apiKey), notify.Channel(s.ch), str(s.name), str(s.title), str(s.text), str(s.html)
	r.TemplateCode, r.VendorTemplateID, r.SenderProfileKey, r.IdempotencyKey, r.CampaignID = str(s.tcode), str(s.vtid), str(s.spk), str(s.idem), str(s.camp)
	r.RequestedAt, r.ScheduledAt, r.UpdatedAt = fromMs(s.req), fromMsPtr(s.sched), fromMs(s.upd)
	r.MarkedLane = notify.Lane(str(s.lane))
	r.RecipientID, r.Category = str(s.rid), str(s.cat)
	r.SelectedProviderID, r.SelectedMessageID, r.FinalErrorCode, r.FinalErrorMessage = str(s.sel), str(s.selMsg), str(s.fcode), str(s.fmsg)
	for _, f := range []struct {
		src *string
		dst any
	}{{s.tvars, &r.TemplateVariables}, {s.headers, &r.Headers}, {s.meta, &r.Metadata}, {s.pref, &r.PreferredProviderIDs}, {s.fallback, &r.Fallback}, {s.inapp, &r.InApp}} {
		if f.src != nil {
			if err := fromJSON(*f.src, f.dst); err != nil {
				return nil, err
			}
		}
	}
	if s.decisions != nil {
		ds, err := decodeDecisions(*s.decisions, r.Category, r.RecipientID)
		if err != nil {
			return nil, err
		}
		r.Decisions = ds
	}
	r.ExpandFallback()
	return &r, nil
}

// AcceptRequests inserts each request unless its idempotency key exists,
// then inserts the queue jobs of the new ones in one River call and their
// job rows, all in the caller's transaction: a request is never stored
// without its job, nor a job without its request. Requests without an
// idempotency key (bulk sends, campaign fan-out) are inserted in bulk
// (COPY on PostgreSQL, multi-row statements on SQLite).
func (t requestTx) AcceptRequests(ctx context.Context, accepts []*notify.Accept, now time.Time) error {
	var plain []*notify.Accept
	for _, a := range accepts {
		r := a.Request
		if r.IdempotencyKey == "" {
			plain = append(plain, a)
			continue
		}
		n, err := t.c.Exec(ctx, `INSERT INTO notification_requests (`+requestCols+`) VALUES `+requestValues+`
			ON CONFLICT (workspace_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING`, requestArgs(r)...)
		if err != nil {
			return err
		}
		if n == 0 {
			if err := t.findExisting(ctx, a); err != nil {
				return err
			}
			continue
		}
		t.queueDispatch(a, now)
	}
	rows := make([][]any, len(plain))
	for i, a := range plain {
		rows[i] = requestArgs(a.Request)
	}
	if err := t.insertRows(ctx, "notification_requests", requestColList, rows, requestChunk); err != nil {
		return err
	}
	for _, a := range plain {
		t.queueDispatch(a, now)
	}
	return nil
}

var requestColList = splitCols(requestCols)

// requestValues is one row of requestCols; requestChunk rows of 35
// parameters stay below SQLite's (32766) and PostgreSQL's (65535) limits.
const (
	requestValues = `(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	requestChunk  = 500
)

// queueDispatch defers the dispatch job of a newly inserted request to
// flush. A request accepted in a final state (Final: a send its
// recipient's preferences forbid, issue 32) gets no job.
func (t requestTx) queueDispatch(a *notify.Accept, now time.Time) {
	r := a.Request
	if a.Final {
		return
	}
	opts := &river.InsertOpts{MaxAttempts: jobs.DispatchMaxAttempts, Queue: jobs.DispatchQueue(r.Lane())}
	if r.ScheduledAt != nil {
		opts.ScheduledAt = *r.ScheduledAt
	}
	j := &notify.Job{ID: newUUID(), WorkspaceID: r.WorkspaceID, RequestID: r.ID,
		Status: notify.JobQueued, MaxAttempts: a.MaxAttempts, QueuedAt: now, ScheduledAt: r.ScheduledAt}
	if j.ScheduledAt != nil {
		j.Status = notify.JobScheduled
	}
	a.Job = j
	t.pending = append(t.pending, pendingJob{job: j, lane: r.Lane(), trace: a.TraceParent,
		params: river.InsertManyParams{Args: jobs.Dispatch{RequestID: r.ID, WorkspaceID: r.WorkspaceID, Trace: a.TraceParent}, InsertOpts: opts}})
}

// findExisting fills a.Existing (and its job) for a request whose
// idempotency key is taken, possibly by a request accepted earlier in this
// same transaction whose job is still pending.
func (t requestTx) findExisting(ctx context.Context, a *notify.Accept) error {
	r := a.Request
	existing, err := scanRequest(t.c.QueryRow(ctx, `SELECT `+requestCols+` FROM notification_requests
		WHERE workspace_id = ? AND idempotency_key = ?`, r.WorkspaceID, r.IdempotencyKey))
	if err != nil {
		return err
	}
	a.Existing = existing
	for _, p := range t.pending {
		if p.job.RequestID == existing.ID {
			a.ExistingJob = p.job
			return nil
		}
	}
	j, err := t.FindJobByRequest(ctx, r.WorkspaceID, existing.ID)
	if err != nil && !notify.IsNotFound(err) {
		return err
	}
	a.ExistingJob = j
	return nil
}

// pendingJob is a dispatch job whose River insert and job row are
// deferred to the end of the transaction, so a group commit inserts all
// its jobs with one River call (one statement) instead of one per request.
type pendingJob struct {
	job    *notify.Job
	lane   notify.Lane
	params river.InsertManyParams
	// trace is the request's traceparent (notify.Accept.TraceParent).
	trace string
}

// flush inserts the pending River jobs and their job rows in bulk. It
// runs right before commit. Requests to run at once share dispatch_batch
// jobs of up to DispatchBatchMax requests (one job run claims and records
// them together), each job holding requests of one lane; a scheduled
// request gets a dispatch job of its own at its time.
func (t requestTx) flush(ctx context.Context) error {
	if len(t.pending) == 0 {
		return nil
	}
	var params []river.InsertManyParams
	owner := make([]int, len(t.pending)) // index into params of each pending job
	now := map[notify.Lane][]int{}
	for i, p := range t.pending {
		if p.params.InsertOpts != nil && !p.params.InsertOpts.ScheduledAt.IsZero() {
			owner[i] = len(params)
			params = append(params, p.params)
			continue
		}
		now[p.lane] = append(now[p.lane], i)
	}
	for _, lane := range []notify.Lane{notify.LaneTransactional, notify.LaneBulk} {
		due := now[lane]
		for start := 0; start < len(due); start += jobs.DispatchBatchMax {
			part := due[start:min(start+jobs.DispatchBatchMax, len(due))]
			var traces map[string]string
			for _, i := range part {
				owner[i] = len(params)
				if tp := t.pending[i].trace; tp != "" {
					if traces == nil {
						traces = map[string]string{}
					}
					traces[t.pending[i].job.RequestID] = tp
				}
			}
			params = append(params, river.InsertManyParams{Args: jobs.DispatchBatch{Count: len(part), Traces: traces},
				InsertOpts: &river.InsertOpts{MaxAttempts: jobs.DispatchMaxAttempts, Queue: jobs.DispatchQueue(lane)}})
		}
	}
	ids, err := t.c.InsertJobs(ctx, params)
	if err != nil {
		return err
	}
	rows := make([][]any, len(t.pending))
	for i, p := range t.pending {
		j := p.job
		j.QueueJobID = ids[owner[i]]
		rows[i] = []any{j.ID, j.WorkspaceID, j.RequestID, j.QueueJobID, j.Status, j.AttemptsMade, j.MaxAttempts,
			ms(j.QueuedAt), msPtr(j.ScheduledAt), nil, nil, nil, nil, nil, nil, nil}
	}
	if err := t.insertRows(ctx, "notification_jobs", jobColList, rows, 1000); err != nil {
		return err
	}
	t.pending = t.pending[:0]
	return nil
}

var jobColList = splitCols(jobCols)

const jobCols = `id, workspace_id, request_id, queue_job_id, status, attempts_made, max_attempts, queued_at, scheduled_at,
	started_at, finished_at, next_retry_at, last_error_code, last_error_message, last_provider_account_id, run_owner`

func (t requestTx) insertJob(ctx context.Context, j *notify.Job) error {
	_, err := t.c.Exec(ctx, `INSERT INTO notification_jobs (`+jobCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		j.ID, j.WorkspaceID, j.RequestID, j.QueueJobID, j.Status, j.AttemptsMade, j.MaxAttempts, ms(j.QueuedAt), msPtr(j.ScheduledAt),
		msPtr(j.StartedAt), msPtr(j.FinishedAt), msPtr(j.NextRetryAt), nullable(j.LastErrorCode), nullable(j.LastErrorMessage),
		nullable(j.LastProviderAccountID), nullable(j.RunOwner))
	return err
}

func scanJob(row Row) (*notify.Job, error) {
	var j notify.Job
	var queued int64
	var sched, started, finished, next *int64
	var code, msg, prov, owner *string
	if err := row.Scan(&j.ID, &j.WorkspaceID, &j.RequestID, &j.QueueJobID, &j.Status, &j.AttemptsMade, &j.MaxAttempts, &queued,
		&sched, &started, &finished, &next, &code, &msg, &prov, &owner); err != nil {
		return nil, err
	}
	j.QueuedAt, j.ScheduledAt, j.StartedAt, j.FinishedAt, j.NextRetryAt = fromMs(queued), fromMsPtr(sched), fromMsPtr(started), fromMsPtr(finished), fromMsPtr(next)
	j.LastErrorCode, j.LastErrorMessage, j.LastProviderAccountID, j.RunOwner = str(code), str(msg), str(prov), str(owner)
	return &j, nil
}

func (t requestTx) FindRequest(ctx context.Context, workspaceID, id string) (*notify.Request, error) {
	return scanRequest(t.c.QueryRow(ctx, `SELECT `+requestCols+` FROM notification_requests WHERE workspace_id = ? AND id = ?`, workspaceID, id))
}

// LockRequest reads a request through a no-op update, which takes the
// row's write lock until the transaction ends (PostgreSQL) and returns
// the latest committed state: status moves (dispatch, cancel) read and
// write under it, so a concurrent cancel is never overwritten.
func (t requestTx) LockRequest(ctx context.Context, workspaceID, id string) (*notify.Request, error) {
	return scanRequest(t.c.QueryRow(ctx, `UPDATE notification_requests SET status = status WHERE workspace_id = ? AND id = ?
		RETURNING `+requestCols, workspaceID, id))
}

// UpdateRequest saves the mutable state of r.
func (t requestTx) UpdateRequest(ctx context.Context, r *notify.Request) error {
	return expectOne(t.c.Exec(ctx, `UPDATE notification_requests SET status = ?, updated_at = ?, selected_provider_account_id = ?,
		selected_provider_message_id = ?, final_error_code = ?, final_error_message = ? WHERE workspace_id = ? AND id = ?`,
		r.Status, ms(r.UpdatedAt), nullable(r.SelectedProviderID), nullable(r.SelectedMessageID), nullable(r.FinalErrorCode),
		nullable(r.FinalErrorMessage), r.WorkspaceID, r.ID))
}

func (t requestTx) FindJobByRequest(ctx context.Context, workspaceID, requestID string) (*notify.Job, error) {
	return scanJob(t.c.QueryRow(ctx, `SELECT `+jobCols+` FROM notification_jobs WHERE workspace_id = ? AND request_id = ?`, workspaceID, requestID))
}

func (t requestTx) FindJob(ctx context.Context, workspaceID, id string) (*notify.Job, error) {
	return scanJob(t.c.QueryRow(ctx, `SELECT `+jobCols+` FROM notification_jobs WHERE workspace_id = ? AND id = ?`, workspaceID, id))
}

func (t requestTx) UpdateJob(ctx context.Context, j *notify.Job) error {
	return expectOne(t.c.Exec(ctx, `UPDATE notification_jobs SET status = ?, attempts_made = ?, started_at = ?, finished_at = ?,
		next_retry_at = ?, last_error_code = ?, last_error_message = ?, last_provider_account_id = ? WHERE workspace_id = ? AND id = ?`,
		j.Status, j.AttemptsMade, msPtr(j.StartedAt), msPtr(j.FinishedAt), msPtr(j.NextRetryAt), nullable(j.LastErrorCode),
		nullable(j.LastErrorMessage), nullable(j.LastProviderAccountID), j.WorkspaceID, j.ID))
}

func (t requestTx) CancelScheduledWork(ctx context.Context, ref int64) error {
	return t.c.CancelJob(ctx, ref)
}

// FindOpenJobs lists non-terminal jobs, newest enqueued first: the
// unfinished ones (scheduled, queued, processing, retrying) through the
// partial index on unfinished jobs, and the dead letters through their
// table (a dead letter is finished: failed after spending its attempts).
func (t requestTx) FindOpenJobs(ctx context.Context, workspaceID string, limit int) ([]*notify.OpenJob, error) {
	rows, err := t.c.Query(ctx, `SELECT j.id, j.workspace_id, j.request_id, j.queue_job_id, j.status, j.attempts_made, j.max_attempts,
		j.queued_at, j.scheduled_at, j.started_at, j.finished_at, j.next_retry_at, j.last_error_code, j.last_error_message,
		j.last_provider_account_id, r.channel, r.template_code, r.recipient_address, p.provider_kind, p.display_name
		FROM (
			SELECT * FROM (SELECT * FROM notification_jobs WHERE workspace_id = ? AND finished_at IS NULL
				AND status IN ('scheduled', 'queued', 'processing', 'retrying') ORDER BY queued_at DESC, id DESC LIMIT ?) AS unfinished
			UNION ALL
			SELECT * FROM (SELECT n.* FROM dead_letters d JOIN notification_jobs n ON n.id = d.job_id
				WHERE d.workspace_id = ? AND n.workspace_id = ? AND n.status = 'dead_letter' ORDER BY n.queued_at DESC, n.id DESC LIMIT ?) AS dead
		) AS j JOIN notification_requests r ON r.id = j.request_id
		LEFT JOIN provider_accounts p ON p.id = j.last_provider_account_id
		ORDER BY j.queued_at DESC, j.id DESC LIMIT ?`, workspaceID, limit, workspaceID, workspaceID, limit, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*notify.OpenJob
	for rows.Next() {
		var j notify.Job
		var o notify.OpenJob
		var queued int64
		var sched, started, finished, next *int64
		var code, msg, prov, tcode, kind, name *string
		var ch string
		if err := rows.Scan(&j.ID, &j.WorkspaceID, &j.RequestID, &j.QueueJobID, &j.Status, &j.AttemptsMade, &j.MaxAttempts, &queued,
			&sched, &started, &finished, &next, &code, &msg, &prov, &ch, &tcode, &o.Recipient, &kind, &name); err != nil {
			return nil, err
		}
		j.QueuedAt, j.ScheduledAt, j.StartedAt, j.FinishedAt, j.NextRetryAt = fromMs(queued), fromMsPtr(sched), fromMsPtr(started), fromMsPtr(finished), fromMsPtr(next)
		j.LastErrorCode, j.LastErrorMessage, j.LastProviderAccountID = str(code), str(msg), str(prov)
		o.Job, o.Channel, o.TemplateCode, o.ProviderKind, o.ProviderDisplayName = &j, notify.Channel(ch), str(tcode), str(kind), str(name)
		out = append(out, &o)
	}
	return out, rows.Err()
}

// CreateDirectRequest stores a request sent synchronously (test-send,
// OTP) with its job row and no queue job.
func (t requestTx) CreateDirectRequest(ctx context.Context, r *notify.Request, j *notify.Job) error {
	if _, err := t.c.Exec(ctx, `INSERT INTO notification_requests (`+requestCols+`) VALUES `+requestValues, requestArgs(r)...); err != nil {
		return err
	}
	return t.insertJob(ctx, j)
}

// FindRequests pages a workspace's requests newest first.
func (t requestTx) FindRequests(ctx context.Context, workspaceID string, f notify.RequestFilter) ([]*notify.Request, error) {
	var where strings.Builder
	args := []any{workspaceID}
	where.WriteString(`workspace_id = ?`)
	add := func(cond string, v any) {
		where.WriteString(` AND ` + cond)
		args = append(args, v)
	}
	if f.Status != "" {
		add(`status = ?`, f.Status)
	}
	if f.Channel != "" {
		add(`channel = ?`, string(f.Channel))
	}
	if f.From != nil {
		add(`requested_at >= ?`, ms(*f.From))
	}
	if f.To != nil {
		add(`requested_at <= ?`, ms(*f.To))
	}
	if f.Recipient != "" {
		add(`recipient_address = ?`, f.Recipient)
	}
	if f.RequestID != "" {
		add(`id = ?`, f.RequestID)
	}
	if f.Test != nil {
		add(`test = ?`, *f.Test)
	}
	if f.Before != nil {
		where.WriteString(` AND (requested_at < ? OR (requested_at = ? AND id < ?))`)
		args = append(args, ms(f.Before.At), ms(f.Before.At), f.Before.ID)
	}
	args = append(args, f.Limit)
	return queryAll(ctx, t.c, scanRequest, `SELECT `+requestCols+` FROM notification_requests WHERE `+where.String()+`
		ORDER BY requested_at DESC, id DESC LIMIT ?`, args...)
}
