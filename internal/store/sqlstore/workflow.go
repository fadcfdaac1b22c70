package sqlstore

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"github.com/notifyd/notifyd/internal/jobs"
	"github.com/notifyd/notifyd/internal/notify"
)

// workflowTx holds the verbs of workflows, their runs and steps (issue 34).
type workflowTx struct{ *Tx }

const workflowCols = `id, workspace_id, key, name, published_version, created_at, updated_at`

func scanWorkflow(row Row) (*notify.Workflow, error) {
	var w notify.Workflow
	var cr, up int64
	if err := row.Scan(&w.ID, &w.WorkspaceID, &w.Key, &w.Name, &w.PublishedVersion, &cr, &up); err != nil {
		return nil, err
	}
	w.CreatedAt, w.UpdatedAt = fromMs(cr), fromMs(up)
	return &w, nil
}

// CreateWorkflow uses DO NOTHING so a taken key answers ErrConflict
// without aborting the PostgreSQL transaction.
func (t workflowTx) CreateWorkflow(ctx context.Context, w *notify.Workflow) error {
	n, err := t.c.Exec(ctx, `INSERT INTO workflows (`+workflowCols+`) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		w.ID, w.WorkspaceID, w.Key, w.Name, w.PublishedVersion, ms(w.CreatedAt), ms(w.UpdatedAt))
	if err != nil {
		return err
	}
	if n == 0 {
		return notify.ErrConflict
	}
	return t.bumpConfig(ctx, w.WorkspaceID)
}

func (t workflowTx) FindWorkflowByKey(ctx context.Context, workspaceID, key string) (*notify.Workflow, error) {
	return scanWorkflow(t.c.QueryRow(ctx, `SELECT `+workflowCols+` FROM workflows WHERE workspace_id = ? AND key = ?`, workspaceID, key))
}

func (t workflowTx) FindWorkflows(ctx context.Context, workspaceID string) ([]*notify.Workflow, error) {
	return queryAll(ctx, t.c, scanWorkflow, `SELECT `+workflowCols+` FROM workflows WHERE workspace_id = ? ORDER BY key`, workspaceID)
}

const workflowVersionCols = `workflow_id, workspace_id, version, steps, created_at, published_at`

func scanWorkflowVersion(row Row) (*notify.WorkflowVersion, error) {
	var v notify.WorkflowVersion
	var steps string
	var cr int64
	var pub *int64
	if err := row.Scan(&v.WorkflowID, &v.WorkspaceID, &v.Version, &steps, &cr, &pub); err != nil {
		return nil, err
	}
	if err := fromJSON(steps, &v.Steps); err != nil {
		return nil, err
	}
	v.CreatedAt, v.PublishedAt = fromMs(cr), fromMsPtr(pub)
	return &v, nil
}

func (t workflowTx) CreateWorkflowVersion(ctx context.Context, v *notify.WorkflowVersion) error {
	_, err := t.c.Exec(ctx, `INSERT INTO workflow_versions (`+workflowVersionCols+`) VALUES (?, ?, ?, ?, ?, ?)`,
		v.WorkflowID, v.WorkspaceID, v.Version, toJSON(v.Steps), ms(v.CreatedAt), msPtr(v.PublishedAt))
	if err != nil {
		return err
	}
	return t.bumpConfig(ctx, v.WorkspaceID)
}

func (t workflowTx) FindWorkflowVersion(ctx context.Context, workspaceID, workflowID string, version int) (*notify.WorkflowVersion, error) {
	return scanWorkflowVersion(t.c.QueryRow(ctx, `SELECT `+workflowVersionCols+` FROM workflow_versions
		WHERE workspace_id = ? AND workflow_id = ? AND version = ?`, workspaceID, workflowID, version))
}

func (t workflowTx) FindWorkflowVersions(ctx context.Context, workspaceID, workflowID string) ([]*notify.WorkflowVersion, error) {
	return queryAll(ctx, t.c, scanWorkflowVersion, `SELECT `+workflowVersionCols+` FROM workflow_versions
		WHERE workspace_id = ? AND workflow_id = ? ORDER BY version DESC`, workspaceID, workflowID)
}

func (t workflowTx) PublishWorkflowVersion(ctx context.Context, workspaceID, workflowID string, version int, at time.Time) error {
	if err := expectOne(t.c.Exec(ctx, `UPDATE workflow_versions SET published_at = COALESCE(published_at, ?)
		WHERE workspace_id = ? AND workflow_id = ? AND version = ?`, ms(at), workspaceID, workflowID, version)); err != nil {
		return err
	}
	if err := expectOne(t.c.Exec(ctx, `UPDATE workflows SET published_version = ?, updated_at = ? WHERE workspace_id = ? AND id = ?`,
		version, ms(at), workspaceID, workflowID)); err != nil {
		return err
	}
	return t.bumpConfig(ctx, workspaceID)
}

const workflowRunCols = `id, workspace_id, workflow_id, workflow_key, version, recipient_id, payload, idempotency_key,
	cancellation_key, status, digest, created_at, updated_at, ended_at`

func scanWorkflowRun(row Row) (*notify.WorkflowRun, error) {
	var r notify.WorkflowRun
	var payload string
	var idem, digest *string
	var cr, up int64
	var end *int64
	if err := row.Scan(&r.ID, &r.WorkspaceID, &r.WorkflowID, &r.WorkflowKey, &r.Version, &r.RecipientID, &payload, &idem,
		&r.CancellationKey, &r.Status, &digest, &cr, &up, &end); err != nil {
		return nil, err
	}
	if err := fromJSON(payload, &r.Payload); err != nil {
		return nil, err
	}
	if idem != nil {
		r.IdempotencyKey = *idem
	}
	if digest != nil {
		r.Digest = &notify.WorkflowDigestResult{}
		if err := fromJSON(*digest, r.Digest); err != nil {
			return nil, err
		}
	}
	r.CreatedAt, r.UpdatedAt, r.EndedAt = fromMs(cr), fromMs(up), fromMsPtr(end)
	return &r, nil
}

const workflowStepCols = `run_id, workspace_id, step_index, step_key, step_type, status, outcome, request_id, due_at,
	queue_job_id, created_at, ended_at`

func scanWorkflowStep(row Row) (*notify.WorkflowRunStep, error) {
	var s notify.WorkflowRunStep
	var due, cr int64
	var job, end *int64
	if err := row.Scan(&s.RunID, &s.WorkspaceID, &s.Index, &s.Key, &s.Type, &s.Status, &s.Outcome, &s.RequestID, &due,
		&job, &cr, &end); err != nil {
		return nil, err
	}
	if job != nil {
		s.QueueJobID = *job
	}
	s.DueAt, s.CreatedAt, s.EndedAt = fromMs(due), fromMs(cr), fromMsPtr(end)
	return &s, nil
}

func digestJSON(d *notify.WorkflowDigestResult) *string {
	if d == nil {
		return nil
	}
	s := toJSON(d)
	return &s
}

// uncached marks a statement of rows rows (or ids) of a batch, when
// many, to run without a cached prepared statement (FreshPlan): on
// PostgreSQL each distinct row count is a statement text of its own, up
// to tens of kilobytes with thousands of parameters, and every pooled
// connection kept its own prepared copy of each, a heap the collector
// scanned again and again under serve's memory limit. A few rows (the
// triggers of one group commit) keep their cached plans.
func uncached(rows int, args []any) []any {
	if rows < 32 {
		return args
	}
	return append([]any{FreshPlan}, args...)
}

// stepJobs are the queue jobs of pending steps, each due at its time (a
// delay's end, a digest's window) or at once. Delay and send steps due
// at the same instant share WorkflowSteps jobs of up to WorkflowStepsMax
// (one run decides them together); other steps get a job each. job[i]
// is the index in the answer of steps[i]'s job.
func stepJobs(steps []*notify.WorkflowRunStep) (params []river.InsertManyParams, job []int) {
	job = make([]int, len(steps))
	shared := map[string]int{} // workspace and due ms: its open job
	now := time.Now()
	for i, s := range steps {
		opts := &river.InsertOpts{Queue: jobs.QueueWorkflows, MaxAttempts: jobs.WorkflowStepMaxAttempts}
		if !s.DueAt.IsZero() && s.DueAt.After(now) {
			opts.ScheduledAt = s.DueAt
		}
		ref := jobs.StepRef{RunID: s.RunID, Step: s.Index}
		if s.Type == notify.StepDelay || s.Type == notify.StepSend {
			opts.ScheduledAt = time.Time{}
			if early := s.DueAt.Add(-jobs.WorkflowStepsEarly); early.After(now) {
				opts.ScheduledAt = early
			}
		} else {
			job[i] = len(params)
			params = append(params, river.InsertManyParams{Args: jobs.WorkflowStep{WorkspaceID: s.WorkspaceID, RunID: s.RunID, Step: s.Index}, InsertOpts: opts})
			continue
		}
		k := s.WorkspaceID + "\x00" + strconv.FormatInt(ms(s.DueAt), 10)
		if j, ok := shared[k]; ok {
			a := params[j].Args.(jobs.WorkflowSteps)
			if len(a.Steps) < jobs.WorkflowStepsMax {
				a.Steps = append(a.Steps, ref)
				params[j].Args, job[i] = a, j
				continue
			}
		}
		shared[k], job[i] = len(params), len(params)
		params = append(params, river.InsertManyParams{Args: jobs.WorkflowSteps{WorkspaceID: s.WorkspaceID, Steps: []jobs.StepRef{ref}}, InsertOpts: opts})
	}
	return params, job
}

// insertSteps inserts step rows, with the queue jobs of the pending
// ones, in multi-row statements.
func (t workflowTx) insertSteps(ctx context.Context, steps []*notify.WorkflowRunStep) error {
	if err := t.scheduleSteps(ctx, steps, func(s *notify.WorkflowRunStep) bool { return s.Status == notify.StepPending }); err != nil {
		return err
	}
	return t.writeSteps(ctx, steps)
}

// writeSteps inserts step rows in multi-row statements of up to 500.
func (t workflowTx) writeSteps(ctx context.Context, steps []*notify.WorkflowRunStep) error {
	const one = "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
	for start := 0; start < len(steps); start += 500 {
		part := steps[start:min(start+500, len(steps))]
		args := make([]any, 0, 12*len(part))
		for _, s := range part {
			args = append(args, s.RunID, s.WorkspaceID, s.Index, s.Key, s.Type, s.Status, s.Outcome, s.RequestID, ms(s.DueAt),
				int64OrNil(s.QueueJobID), ms(s.CreatedAt), msPtr(s.EndedAt))
		}
		if _, err := t.c.Exec(ctx, `INSERT INTO workflow_run_steps (`+workflowStepCols+`) VALUES `+one+strings.Repeat(", "+one, len(part)-1),
			uncached(len(part), args)...); err != nil {
			return err
		}
	}
	return nil
}

// StartWorkflowRuns inserts the runs in multi-row statements that skip
// the ones whose idempotency key was taken (by an earlier trigger, or by
// an earlier start of the same call), then reads those existing runs,
// then inserts the created runs' step rows.
func (t workflowTx) StartWorkflowRuns(ctx context.Context, starts []*notify.WorkflowRunStart) ([]bool, error) {
	if _, pg := t.c.(Copier); pg && len(starts) > 0 && len(starts) <= 500 && !keyedStarts(starts) {
		return t.startTogether(ctx, starts)
	}
	created := make([]bool, len(starts))
	const one = "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
	for start := 0; start < len(starts); start += 500 {
		part := starts[start:min(start+500, len(starts))]
		args := make([]any, 0, 14*len(part))
		keyed := false
		for _, st := range part {
			r := st.Run
			keyed = keyed || r.IdempotencyKey != ""
			args = append(args, r.ID, r.WorkspaceID, r.WorkflowID, r.WorkflowKey, r.Version, r.RecipientID, toJSON(r.Payload),
				nullable(r.IdempotencyKey), r.CancellationKey, r.Status, digestJSON(r.Digest), ms(r.CreatedAt), ms(r.UpdatedAt), msPtr(r.EndedAt))
		}
		insert := `INSERT INTO workflow_runs (` + workflowRunCols + `) VALUES ` + one + strings.Repeat(", "+one, len(part)-1)
		if !keyed {
			// No idempotency key, no conflict to skip: every run is new,
			// and no id comes back to be scanned.
			if _, err := t.c.Exec(ctx, insert, uncached(len(part), args)...); err != nil {
				return nil, err
			}
			for i := range part {
				created[start+i] = true
			}
			continue
		}
		ids, err := queryAll(ctx, t.c, func(row Row) (string, error) {
			var id string
			return id, row.Scan(&id)
		}, insert+`
			ON CONFLICT (workspace_id, workflow_id, recipient_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
			RETURNING id`, uncached(len(part), args)...)
		if err != nil {
			return nil, err
		}
		inserted := make(map[string]bool, len(ids))
		for _, id := range ids {
			inserted[id] = true
		}
		for i, st := range part {
			created[start+i] = inserted[st.Run.ID]
		}
	}
	var steps []*notify.WorkflowRunStep
	for i, st := range starts {
		r := st.Run
		if !created[i] {
			existing, err := scanWorkflowRun(t.c.QueryRow(ctx, `SELECT `+workflowRunCols+` FROM workflow_runs
				WHERE workspace_id = ? AND workflow_id = ? AND recipient_id = ? AND idempotency_key = ?`,
				r.WorkspaceID, r.WorkflowID, r.RecipientID, r.IdempotencyKey))
			if err != nil {
				return nil, err
			}
			*r = *existing
			continue
		}
		steps = append(steps, st.First)
		if st.Then != nil {
			steps = append(steps, st.Then)
		}
	}
	return created, t.insertSteps(ctx, steps)
}

// keyedStarts says some run of starts has an idempotency key.
func keyedStarts(starts []*notify.WorkflowRunStart) bool {
	for _, st := range starts {
		if st.Run.IdempotencyKey != "" {
			return true
		}
	}
	return false
}

// startTogether is StartWorkflowRuns for runs without idempotency keys
// (every one is new) on PostgreSQL: the steps' queue jobs first, then the
// runs and their step rows in one statement (the runs' insert a CTE of
// the steps'), a round trip and a statement fewer per group commit of
// triggers. A step's run needs no foreign key check here (migration 051):
// the same statement inserts it.
func (t workflowTx) startTogether(ctx context.Context, starts []*notify.WorkflowRunStart) ([]bool, error) {
	var steps []*notify.WorkflowRunStep
	for _, st := range starts {
		steps = append(steps, st.First)
		if st.Then != nil {
			steps = append(steps, st.Then)
		}
	}
	if err := t.scheduleSteps(ctx, steps, func(s *notify.WorkflowRunStep) bool { return s.Status == notify.StepPending }); err != nil {
		return nil, err
	}
	const run, step = "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
	args := make([]any, 0, 14*len(starts)+12*len(steps))
	for _, st := range starts {
		r := st.Run
		args = append(args, r.ID, r.WorkspaceID, r.WorkflowID, r.WorkflowKey, r.Version, r.RecipientID, toJSON(r.Payload),
			nullable(r.IdempotencyKey), r.CancellationKey, r.Status, digestJSON(r.Digest), ms(r.CreatedAt), ms(r.UpdatedAt), msPtr(r.EndedAt))
	}
	for _, s := range steps {
		args = append(args, s.RunID, s.WorkspaceID, s.Index, s.Key, s.Type, s.Status, s.Outcome, s.RequestID, ms(s.DueAt),
			int64OrNil(s.QueueJobID), ms(s.CreatedAt), msPtr(s.EndedAt))
	}
	q := `WITH runs AS (INSERT INTO workflow_runs (` + workflowRunCols + `) VALUES ` + run + strings.Repeat(", "+run, len(starts)-1) +
		`) INSERT INTO workflow_run_steps (` + workflowStepCols + `) VALUES ` + step + strings.Repeat(", "+step, len(steps)-1)
	if _, err := t.c.Exec(ctx, q, uncached(len(starts), args)...); err != nil {
		return nil, err
	}
	created := make([]bool, len(starts))
	for i := range created {
		created[i] = true
	}
	return created, nil
}

// deleteRuns deletes the runs of a recipient profile and their steps:
// the runs first, each waiting for a step job that holds its lock, then
// the steps of the runs deleted, a new statement that sees what such a
// job wrote (on PostgreSQL steps have no cascade from their run, migration
// 051; on SQLite the cascade leaves this nothing to delete).
func (t workflowTx) deleteRuns(ctx context.Context, workspaceID, recipientID string) error {
	ids, err := queryAll(ctx, t.c, func(row Row) (string, error) {
		var id string
		return id, row.Scan(&id)
	}, `DELETE FROM workflow_runs WHERE workspace_id = ? AND recipient_id = ? RETURNING id`, workspaceID, recipientID)
	if err != nil {
		return err
	}
	for start := 0; start < len(ids); start += 500 {
		part := ids[start:min(start+500, len(ids))]
		args := workspaceAndIDs(workspaceID, part)
		if _, err := t.c.Exec(ctx, `DELETE FROM workflow_run_steps WHERE workspace_id = ? AND run_id IN (`+placeholders(len(part))+`)`,
			uncached(len(part), args)...); err != nil {
			return err
		}
	}
	return nil
}

// FindTriggerWorkflow reads the workflow of key, its published version
// and how many of recipients are profiles of the workspace. The workflow
// and its version are kept in process (configcache.go), labelled with the
// workspace's config_version read in the same statement: with one kept,
// a trigger reads one statement of the version and the count, and reads
// the workflow again only when the version moved. Every write of a
// workflow renews the version in its transaction, so a workflow published
// through another process is seen by the next trigger.
func (t workflowTx) FindTriggerWorkflow(ctx context.Context, workspaceID, key string, recipients []string) (*notify.Workflow, *notify.WorkflowVersion, int, error) {
	known, args := `0`, make([]any, 0, len(recipients)+3)
	if len(recipients) > 0 {
		known = `(SELECT COUNT(*) FROM recipients p WHERE p.workspace_id = ? AND p.external_id IN (?` +
			strings.Repeat(", ?", len(recipients)-1) + `))`
		args = append(args, workspaceID)
		for _, id := range recipients {
			args = append(args, id)
		}
	}
	var version int64
	var n int
	if t.cfg != nil {
		if e := t.cfg.workflow(workspaceID, key); e != nil {
			if ok, err := t.heldTrigger(ctx, workspaceID, e.version, recipients); err != nil {
				return nil, nil, 0, err
			} else if ok {
				return e.w, e.v, len(recipients), nil
			}
			err := t.c.QueryRow(ctx, `SELECT config_version, `+known+` FROM workspaces WHERE id = ?`,
				append(args, workspaceID)...).Scan(&version, &n)
			if err != nil {
				return nil, nil, 0, err
			}
			if version == e.version {
				return e.w, e.v, n, nil
			}
		}
	}
	var w notify.Workflow
	var cr, up int64
	var steps *string
	var vcr, pub *int64
	err := t.c.QueryRow(ctx, `SELECT w.id, w.workspace_id, w.key, w.name, w.published_version, w.created_at, w.updated_at,
		v.steps, v.created_at, v.published_at, `+known+`, `+configVersionOf+`
		FROM workflows w LEFT JOIN workflow_versions v
			ON v.workspace_id = w.workspace_id AND v.workflow_id = w.id AND v.version = w.published_version
		WHERE w.workspace_id = ? AND w.key = ?`, append(args, workspaceID, workspaceID, key)...).
		Scan(&w.ID, &w.WorkspaceID, &w.Key, &w.Name, &w.PublishedVersion, &cr, &up, &steps, &vcr, &pub, &n, &version)
	if err != nil {
		return nil, nil, 0, err
	}
	w.CreatedAt, w.UpdatedAt = fromMs(cr), fromMs(up)
	var v *notify.WorkflowVersion
	if steps != nil && vcr != nil {
		v = &notify.WorkflowVersion{WorkflowID: w.ID, WorkspaceID: w.WorkspaceID, Version: w.PublishedVersion, CreatedAt: fromMs(*vcr),
			PublishedAt: fromMsPtr(pub)}
		if err := fromJSON(*steps, &v.Steps); err != nil {
			return nil, nil, 0, err
		}
	}
	if t.cfg != nil {
		t.cfg.putWorkflow(workspaceID, key, &wsWorkflow{version: version, w: &w, v: v})
	}
	return &w, v, n, nil
}

// heldTrigger checks a kept workflow of configuration version version
// and the trigger's recipients without a statement of the trigger's own:
// when every recipient is a profile the profile cache holds, the
// workspace's versions read by the check the sends of the workspace share
// (checkVersions, read after this call asked) tell both whether the
// workflow is still current (config_version) and whether the profiles
// still exist (recipients_version: an erasure renews it). ok false: not
// all held, or a version moved; the caller reads.
func (t workflowTx) heldTrigger(ctx context.Context, ws string, version int64, recipients []string) (ok bool, err error) {
	if t.profiles == nil {
		return false, nil
	}
	var hv wsVersions
	for i, ext := range recipients {
		p, v := t.profiles.held(ws, ext)
		if p == nil || (i > 0 && v != hv) {
			return false, nil
		}
		hv = v
	}
	v, err := t.checkVersions(ctx, ws)
	if err != nil {
		return false, err
	}
	return v.config == version && (len(recipients) == 0 || v.recipients == hv.recipients), nil
}

// findRun reads a run and its steps; with lock, through a no-op UPDATE
// that holds the row's write lock on both dialects.
func (t workflowTx) findRun(ctx context.Context, workspaceID, id string, lock bool) (*notify.WorkflowRun, error) {
	q := `SELECT ` + workflowRunCols + ` FROM workflow_runs WHERE workspace_id = ? AND id = ?`
	if lock {
		q = `UPDATE workflow_runs SET updated_at = updated_at WHERE workspace_id = ? AND id = ? RETURNING ` + workflowRunCols
	}
	r, err := scanWorkflowRun(t.c.QueryRow(ctx, q, workspaceID, id))
	if err != nil {
		return nil, err
	}
	r.Steps, err = queryAll(ctx, t.c, scanWorkflowStep, `SELECT `+workflowStepCols+` FROM workflow_run_steps
		WHERE run_id = ? ORDER BY step_index`, r.ID)
	return r, err
}

// ReadWorkflowRuns reads runs by id with their steps, in statements of
// up to 500 ids; with lock, holding each run row's write lock.
func (t workflowTx) ReadWorkflowRuns(ctx context.Context, workspaceID string, ids []string, lock bool) ([]*notify.WorkflowRun, error) {
	return t.readRuns(ctx, workspaceID, ids, lock, workflowRunCols, scanWorkflowRun)
}

// workflowRunStateCols are the columns of a run that LockWorkflowRunStates
// reads.
const workflowRunStateCols = `id, workspace_id, status, updated_at, ended_at`

func scanWorkflowRunState(row Row) (*notify.WorkflowRun, error) {
	var r notify.WorkflowRun
	var up int64
	var end *int64
	if err := row.Scan(&r.ID, &r.WorkspaceID, &r.Status, &up, &end); err != nil {
		return nil, err
	}
	r.UpdatedAt, r.EndedAt = fromMs(up), fromMsPtr(end)
	return &r, nil
}

// LockWorkflowRunStates holds the write lock of the runs of ids and reads
// their status, times and steps, not their payload nor digest.
func (t workflowTx) LockWorkflowRunStates(ctx context.Context, workspaceID string, ids []string) ([]*notify.WorkflowRun, error) {
	return t.readRuns(ctx, workspaceID, ids, true, workflowRunStateCols, scanWorkflowRunState)
}

// readRuns reads the cols of runs by id (scan reads a row of them) with
// their steps, in statements of up to 500 ids; with lock, holding each
// run row's write lock.
func (t workflowTx) readRuns(ctx context.Context, workspaceID string, ids []string, lock bool, cols string,
	scan func(Row) (*notify.WorkflowRun, error)) ([]*notify.WorkflowRun, error) {
	var out []*notify.WorkflowRun
	for start := 0; start < len(ids); start += 500 {
		part := ids[start:min(start+500, len(ids))]
		args := workspaceAndIDs(workspaceID, part)
		in := `(?` + strings.Repeat(", ?", len(part)-1) + `)`
		q := `SELECT ` + cols + ` FROM workflow_runs WHERE workspace_id = ? AND id IN ` + in
		if lock {
			q = `UPDATE workflow_runs SET updated_at = updated_at WHERE workspace_id = ? AND id IN ` + in + ` RETURNING ` + cols
		}
		runs, err := queryAll(ctx, t.c, scan, q, uncached(len(part), args)...)
		if err != nil || len(runs) == 0 {
			if err != nil {
				return nil, err
			}
			continue
		}
		byID := make(map[string]*notify.WorkflowRun, len(runs))
		for _, r := range runs {
			byID[r.ID] = r
		}
		steps, err := queryAll(ctx, t.c, scanWorkflowStep, `SELECT `+workflowStepCols+` FROM workflow_run_steps WHERE workspace_id = ? AND run_id IN `+in+
			` ORDER BY run_id, step_index`, uncached(len(part), args)...)
		if err != nil {
			return nil, err
		}
		for _, st := range steps {
			if r := byID[st.RunID]; r != nil {
				r.Steps = append(r.Steps, st)
			}
		}
		out = append(out, runs...)
	}
	return out, nil
}

func (t workflowTx) LockWorkflowRun(ctx context.Context, workspaceID, id string) (*notify.WorkflowRun, error) {
	return t.findRun(ctx, workspaceID, id, true)
}

func (t workflowTx) FindWorkflowRun(ctx context.Context, workspaceID, id string) (*notify.WorkflowRun, error) {
	return t.findRun(ctx, workspaceID, id, false)
}

func (t workflowTx) FindWorkflowRuns(ctx context.Context, workspaceID string, f notify.WorkflowRunFilter) ([]*notify.WorkflowRun, error) {
	q, args := `SELECT `+workflowRunCols+` FROM workflow_runs WHERE workspace_id = ?`, []any{workspaceID}
	if f.WorkflowID != "" {
		q += ` AND workflow_id = ?`
		args = append(args, f.WorkflowID)
	}
	if f.RecipientID != "" {
		q += ` AND recipient_id = ?`
		args = append(args, f.RecipientID)
	}
	if f.Before != nil {
		q += ` AND (created_at < ? OR (created_at = ? AND id < ?))`
		args = append(args, ms(f.Before.At), ms(f.Before.At), f.Before.ID)
	}
	q += ` ORDER BY created_at DESC, id DESC LIMIT ` + strconv.Itoa(max(f.Limit, 1))
	runs, err := queryAll(ctx, t.c, scanWorkflowRun, q, args...)
	if err != nil || len(runs) == 0 {
		return runs, err
	}
	// The page's steps in one statement.
	byID := make(map[string]*notify.WorkflowRun, len(runs))
	ids := make([]any, len(runs))
	for i, r := range runs {
		byID[r.ID], ids[i] = r, r.ID
	}
	steps, err := queryAll(ctx, t.c, scanWorkflowStep, `SELECT `+workflowStepCols+` FROM workflow_run_steps WHERE run_id IN (?`+
		strings.Repeat(", ?", len(ids)-1)+`) ORDER BY run_id, step_index`, ids...)
	for _, st := range steps {
		byID[st.RunID].Steps = append(byID[st.RunID].Steps, st)
	}
	return runs, err
}

func (t workflowTx) UpdateWorkflowRun(ctx context.Context, r *notify.WorkflowRun) error {
	return expectOne(t.c.Exec(ctx, `UPDATE workflow_runs SET status = ?, digest = ?, updated_at = ?, ended_at = ?
		WHERE workspace_id = ? AND id = ?`, r.Status, digestJSON(r.Digest), ms(r.UpdatedAt), msPtr(r.EndedAt), r.WorkspaceID, r.ID))
}

func (t workflowTx) EndWorkflowRunStep(ctx context.Context, s *notify.WorkflowRunStep) error {
	return expectOne(t.c.Exec(ctx, `UPDATE workflow_run_steps SET status = ?, outcome = ?, request_id = ?, due_at = ?, ended_at = ?
		WHERE workspace_id = ? AND run_id = ? AND step_index = ?`, s.Status, s.Outcome, s.RequestID, ms(s.DueAt), msPtr(s.EndedAt),
		s.WorkspaceID, s.RunID, s.Index))
}

func (t workflowTx) AddWorkflowRunStep(ctx context.Context, s *notify.WorkflowRunStep) error {
	return t.insertSteps(ctx, []*notify.WorkflowRunStep{s})
}

// SaveWorkflowRunSteps writes step rows of a batch of step runs: the
// rows of their run and index that exist are updated (an UPDATE … FROM
// (VALUES …) of the columns a step's end changes), the others inserted
// in bulk (COPY on PostgreSQL); a pending row without a job gets one
// first (stepJobs).
func (t workflowTx) SaveWorkflowRunSteps(ctx context.Context, steps []*notify.WorkflowRunStep) error {
	if err := t.scheduleSteps(ctx, steps, func(s *notify.WorkflowRunStep) bool {
		return s.Status == notify.StepPending && s.QueueJobID == 0
	}); err != nil {
		return err
	}
	type key struct {
		run string
		idx int
	}
	rows := make([][]any, len(steps))
	for i, s := range steps {
		rows[i] = []any{s.RunID, s.WorkspaceID, s.Index, s.Status, s.Outcome, s.RequestID, ms(s.DueAt), int64OrNil(s.QueueJobID), msPtr(s.EndedAt)}
	}
	saved := make(map[key]bool, len(steps))
	err := deliveryTx(t).updateFromValues(ctx, `UPDATE workflow_run_steps SET status = v.column4, outcome = v.column5,
		request_id = v.column6, due_at = CAST(v.column7 AS BIGINT), queue_job_id = CAST(v.column8 AS BIGINT),
		ended_at = CAST(v.column9 AS BIGINT) FROM `, rows, ` AS v WHERE workflow_run_steps.run_id = v.column1
		AND workflow_run_steps.step_index = CAST(v.column3 AS INTEGER) AND workflow_run_steps.workspace_id = v.column2
		RETURNING workflow_run_steps.run_id, workflow_run_steps.step_index`, func(rs Rows) error {
		var k key
		if err := rs.Scan(&k.run, &k.idx); err != nil {
			return err
		}
		saved[k] = true
		return nil
	})
	if err != nil {
		return err
	}
	var added [][]any
	for _, s := range steps {
		if !saved[key{s.RunID, s.Index}] {
			added = append(added, []any{s.RunID, s.WorkspaceID, s.Index, s.Key, s.Type, s.Status, s.Outcome, s.RequestID, ms(s.DueAt),
				int64OrNil(s.QueueJobID), ms(s.CreatedAt), msPtr(s.EndedAt)})
		}
	}
	return requestTx(t).insertRows(ctx, "workflow_run_steps", workflowStepColList, added, 500)
}

var workflowStepColList = []string{"run_id", "workspace_id", "step_index", "step_key", "step_type", "status", "outcome", "request_id",
	"due_at", "queue_job_id", "created_at", "ended_at"}

// SaveWorkflowRuns saves runs' status, digest and times (UpdateWorkflowRun
// for a batch) in UPDATE … FROM (VALUES …) statements of the changed
// columns only: the rows exist, and their payload, written when they
// started, is neither encoded nor sent again.
func (t workflowTx) SaveWorkflowRuns(ctx context.Context, runs []*notify.WorkflowRun) error {
	rows := make([][]any, len(runs))
	for i, r := range runs {
		rows[i] = []any{r.ID, r.WorkspaceID, r.Status, digestJSON(r.Digest), ms(r.UpdatedAt), msPtr(r.EndedAt)}
	}
	return deliveryTx(t).updateFromValues(ctx, `UPDATE workflow_runs SET status = v.column3, digest = v.column4,
		updated_at = CAST(v.column5 AS BIGINT), ended_at = CAST(v.column6 AS BIGINT) FROM `, rows,
		` AS v WHERE workflow_runs.id = v.column1 AND workflow_runs.workspace_id = v.column2`, nil)
}

func (t workflowTx) FindRunningWorkflowRuns(ctx context.Context, workspaceID, workflowID, cancellationKey string) ([]*notify.WorkflowRun, error) {
	return queryAll(ctx, t.c, scanWorkflowRun, `SELECT `+workflowRunCols+` FROM workflow_runs
		WHERE workspace_id = ? AND workflow_id = ? AND cancellation_key = ? AND status = 'running' ORDER BY id`,
		workspaceID, workflowID, cancellationKey)
}

func (t workflowTx) CountWorkflowThrottle(ctx context.Context, workspaceID, workflowID, recipientKey string, since time.Time) (int, error) {
	var n int
	err := t.c.QueryRow(ctx, `SELECT COUNT(*) FROM workflow_throttles WHERE workspace_id = ? AND workflow_id = ? AND recipient_key = ? AND at > ?`,
		workspaceID, workflowID, recipientKey, ms(since)).Scan(&n)
	return n, err
}

func (t workflowTx) AddWorkflowThrottle(ctx context.Context, workspaceID, workflowID, recipientKey, runID string, at time.Time) error {
	_, err := t.c.Exec(ctx, `INSERT INTO workflow_throttles (workspace_id, workflow_id, recipient_key, run_id, at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT DO NOTHING`, workspaceID, workflowID, recipientKey, runID, ms(at))
	return err
}

// JoinWorkflowDigest counts the item on the open window first (the
// UPDATE takes the row's lock, so a release waits for this transaction);
// with none open it opens d, and an insert another process won meanwhile
// sends it back to the count.
func (t workflowTx) JoinWorkflowDigest(ctx context.Context, d *notify.WorkflowDigest, runID string, item map[string]any, at time.Time) (*notify.WorkflowDigest, bool, error) {
	for try := 0; try < 5; try++ {
		var open notify.WorkflowDigest
		var end int64
		err := t.c.QueryRow(ctx, `UPDATE workflow_digests SET count = count + 1
			WHERE workspace_id = ? AND workflow_id = ? AND recipient_id = ? AND digest_key = ? AND released = false
			RETURNING id, run_id, count, window_end`, d.WorkspaceID, d.WorkflowID, d.RecipientID, d.DigestKey).
			Scan(&open.ID, &open.RunID, &open.Count, &end)
		if err == nil {
			open.WorkspaceID, open.WorkflowID, open.RecipientID, open.DigestKey, open.WindowEnd = d.WorkspaceID, d.WorkflowID, d.RecipientID, d.DigestKey, fromMs(end)
			return &open, false, t.addDigestItem(ctx, open.ID, open.Count, runID, item)
		}
		if !errors.Is(err, notify.ErrNotFound) {
			return nil, false, err
		}
		n, err := t.c.Exec(ctx, `INSERT INTO workflow_digests (id, workspace_id, workflow_id, recipient_id, digest_key, run_id, count,
			window_end, released, created_at) VALUES (?, ?, ?, ?, ?, ?, 1, ?, false, ?)
			ON CONFLICT (workflow_id, recipient_id, digest_key) WHERE released = false DO NOTHING`,
			d.ID, d.WorkspaceID, d.WorkflowID, d.RecipientID, d.DigestKey, d.RunID, ms(d.WindowEnd), ms(at))
		if err != nil {
			return nil, false, err
		}
		if n == 1 {
			d.Count = 1
			return d, true, t.addDigestItem(ctx, d.ID, 1, runID, item)
		}
	}
	return nil, false, errors.New("workflow digest: no open window after 5 tries")
}

func (t workflowTx) addDigestItem(ctx context.Context, digestID string, seq int, runID string, item map[string]any) error {
	_, err := t.c.Exec(ctx, `INSERT INTO workflow_digest_items (digest_id, seq, run_id, payload) VALUES (?, ?, ?, ?)`,
		digestID, seq, runID, toJSON(item))
	return err
}

func (t workflowTx) ReleaseWorkflowDigest(ctx context.Context, workspaceID, runID string, maxItems int) (*notify.WorkflowDigest, []map[string]any, bool, error) {
	var d notify.WorkflowDigest
	var end int64
	err := t.c.QueryRow(ctx, `UPDATE workflow_digests SET released = true WHERE workspace_id = ? AND run_id = ? AND released = false
		RETURNING id, workflow_id, recipient_id, digest_key, count, window_end`, workspaceID, runID).
		Scan(&d.ID, &d.WorkflowID, &d.RecipientID, &d.DigestKey, &d.Count, &end)
	if errors.Is(err, notify.ErrNotFound) {
		return nil, nil, false, nil
	}
	if err != nil {
		return nil, nil, false, err
	}
	d.WorkspaceID, d.RunID, d.WindowEnd, d.Released = workspaceID, runID, fromMs(end), true
	items, err := queryAll(ctx, t.c, func(row Row) (map[string]any, error) {
		var s string
		if err := row.Scan(&s); err != nil {
			return nil, err
		}
		var m map[string]any
		return m, fromJSON(s, &m)
	}, `SELECT payload FROM workflow_digest_items WHERE digest_id = ? ORDER BY seq LIMIT `+strconv.Itoa(max(maxItems, 1)), d.ID)
	return &d, items, true, err
}

func (t workflowTx) PutTopicSubscription(ctx context.Context, workspaceID, topic, recipientID string, at time.Time) (bool, error) {
	n, err := t.c.Exec(ctx, `INSERT INTO topic_subscriptions (workspace_id, topic_key, recipient_id, created_at) VALUES (?, ?, ?, ?)
		ON CONFLICT DO NOTHING`, workspaceID, topic, recipientID, ms(at))
	return n == 1, err
}

func (t workflowTx) DeleteTopicSubscription(ctx context.Context, workspaceID, topic, recipientID string) error {
	return expectOne(t.c.Exec(ctx, `DELETE FROM topic_subscriptions WHERE workspace_id = ? AND topic_key = ? AND recipient_id = ?`,
		workspaceID, topic, recipientID))
}

func (t workflowTx) FindTopicSubscribers(ctx context.Context, workspaceID, topic, after string, limit int) ([]string, error) {
	return queryAll(ctx, t.c, func(row Row) (string, error) {
		var s string
		return s, row.Scan(&s)
	}, `SELECT recipient_id FROM topic_subscriptions WHERE workspace_id = ? AND topic_key = ? AND recipient_id > ?
		ORDER BY recipient_id LIMIT `+strconv.Itoa(max(limit, 1)), workspaceID, topic, after)
}

// scheduleSteps gives the steps of steps that need one (need) their queue
// jobs, inserted in one call (stepJobs), and sets their QueueJobID.
func (t workflowTx) scheduleSteps(ctx context.Context, steps []*notify.WorkflowRunStep, need func(*notify.WorkflowRunStep) bool) error {
	var pending []*notify.WorkflowRunStep
	for _, s := range steps {
		if need(s) {
			pending = append(pending, s)
		}
	}
	if len(pending) == 0 {
		return nil
	}
	params, job := stepJobs(pending)
	ids, err := t.c.InsertJobs(ctx, params)
	if err != nil {
		return err
	}
	for i, s := range pending {
		s.QueueJobID = ids[job[i]]
	}
	return nil
}

// workspaceAndIDs is the arguments of a statement scoped by workspace
// over ids: the workspace, then each id.
func workspaceAndIDs(workspaceID string, ids []string) []any {
	args := make([]any, 0, len(ids)+1)
	args = append(args, workspaceID)
	for _, id := range ids {
		args = append(args, id)
	}
	return args
}
