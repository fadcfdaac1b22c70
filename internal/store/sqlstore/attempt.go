package sqlstore

import (
	"context"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/notifyd/notifyd/internal/notify"
)

func newUUID() string { return uuid.Must(uuid.NewV7()).String() }

const attemptCols = `id, workspace_id, request_id, job_id, provider_account_id, provider_kind, provider_display_name, channel, status,
	failure_code, failure_message, provider_message_id, started_at, finished_at, request_json, response_json`

// CreateAttempts writes attempt records in bulk.
func (t requestTx) CreateAttempts(ctx context.Context, as []*notify.Attempt) error {
	rows := make([][]any, len(as))
	for i, a := range as {
		status := "failure"
		if a.Success {
			status = "success"
		}
		rows[i] = []any{a.ID, a.WorkspaceID, a.RequestID, a.JobID, a.ProviderAccountID, a.ProviderKind, a.ProviderDisplayName, string(a.Channel),
			status, nullable(a.FailureCode), nullable(a.FailureMessage), nullable(a.ProviderMessageID), ms(a.StartedAt),
			ms(a.FinishedAt), a.RequestJSON, a.ResponseJSON}
	}
	return t.insertRows(ctx, "attempts", attemptColList, rows, 1000)
}

var attemptColList = splitCols(attemptCols)

func scanAttempt(row Row) (*notify.Attempt, error) {
	var a notify.Attempt
	var ch, status string
	var code, msg, mid *string
	var s, f int64
	if err := row.Scan(&a.ID, &a.WorkspaceID, &a.RequestID, &a.JobID, &a.ProviderAccountID, &a.ProviderKind, &a.ProviderDisplayName,
		&ch, &status, &code, &msg, &mid, &s, &f, &a.RequestJSON, &a.ResponseJSON); err != nil {
		return nil, err
	}
	a.Channel, a.Success, a.FailureCode, a.FailureMessage, a.ProviderMessageID = notify.Channel(ch), status == "success", str(code), str(msg), str(mid)
	a.StartedAt, a.FinishedAt = fromMs(s), fromMs(f)
	return &a, nil
}

// FindAttemptsOfRequest lists a request's attempts by startedAt ascending.
func (t requestTx) FindAttemptsOfRequest(ctx context.Context, workspaceID, requestID string) ([]*notify.Attempt, error) {
	as, err := queryAll(ctx, t.c, scanAttempt, `SELECT `+attemptCols+` FROM attempts WHERE workspace_id = ? AND request_id = ?
		ORDER BY started_at, id`, workspaceID, requestID)
	if err != nil {
		return nil, err
	}
	return as, t.attachFeedback(ctx, workspaceID, as)
}

// FindAttempts pages attempt history newest first, with each attempt's
// request (for its rendered content).
func (t requestTx) FindAttempts(ctx context.Context, workspaceID string, f notify.AttemptFilter) ([]*notify.Attempt, []*notify.Request, error) {
	var where strings.Builder
	args := []any{workspaceID}
	where.WriteString(`workspace_id = ?`)
	if f.RequestID != "" {
		where.WriteString(` AND request_id = ?`)
		args = append(args, f.RequestID)
	}
	if f.Before != nil {
		where.WriteString(` AND (started_at < ? OR (started_at = ? AND id < ?))`)
		args = append(args, ms(f.Before.At), ms(f.Before.At), f.Before.ID)
	}
	args = append(args, f.Limit)
	as, err := queryAll(ctx, t.c, scanAttempt, `SELECT `+attemptCols+` FROM attempts WHERE `+where.String()+`
		ORDER BY started_at DESC, id DESC LIMIT ?`, args...)
	if err == nil {
		err = t.attachFeedback(ctx, workspaceID, as)
	}
	if err != nil {
		return nil, nil, err
	}
	reqs := make([]*notify.Request, len(as))
	cache := map[string]*notify.Request{}
	for i, a := range as {
		r, ok := cache[a.RequestID]
		if !ok {
			if r, err = t.FindRequest(ctx, workspaceID, a.RequestID); err != nil {
				return nil, nil, err
			}
			cache[a.RequestID] = r
		}
		reqs[i] = r
	}
	return as, reqs, nil
}

func (t requestTx) CreateEvent(ctx context.Context, e *notify.Event) error {
	_, err := t.c.Exec(ctx, `INSERT INTO events (id, workspace_id, type, request_id, payload, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
		e.ID, e.WorkspaceID, e.Type, e.RequestID, toJSON(e.Payload), ms(e.CreatedAt))
	return err
}

// deadLetterKeep is how many dead letters a workspace retains (SPEC).
const deadLetterKeep = 10000

func (t requestTx) CreateDeadLetter(ctx context.Context, d *notify.DeadLetter) error {
	if _, err := t.c.Exec(ctx, `INSERT INTO dead_letters (id, workspace_id, job_id, request_id, channel, failed_reason, failed_at, attempts_made)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, d.ID, d.WorkspaceID, d.JobID, d.RequestID, string(d.Channel), d.FailedReason, ms(d.FailedAt), d.AttemptsMade); err != nil {
		return err
	}
	_, err := t.c.Exec(ctx, `DELETE FROM dead_letters WHERE id IN (SELECT id FROM dead_letters WHERE workspace_id = ?
		ORDER BY failed_at DESC, id DESC LIMIT 1000000 OFFSET ?)`, d.WorkspaceID, deadLetterKeep)
	return err
}

const deadLetterCols = `id, workspace_id, job_id, request_id, channel, failed_reason, failed_at, attempts_made`

func scanDeadLetter(row Row) (*notify.DeadLetter, error) {
	var d notify.DeadLetter
	var ch string
	var at int64
	if err := row.Scan(&d.ID, &d.WorkspaceID, &d.JobID, &d.RequestID, &ch, &d.FailedReason, &at, &d.AttemptsMade); err != nil {
		return nil, err
	}
	d.Channel, d.FailedAt = notify.Channel(ch), fromMs(at)
	return &d, nil
}

func (t requestTx) FindDeadLetters(ctx context.Context, workspaceID string, limit int) ([]*notify.DeadLetter, int, error) {
	ds, err := queryAll(ctx, t.c, scanDeadLetter, `SELECT `+deadLetterCols+` FROM dead_letters
		WHERE workspace_id = ? ORDER BY failed_at DESC, id DESC LIMIT ?`, workspaceID, limit)
	if err != nil {
		return nil, 0, err
	}
	var n int
	err = t.c.QueryRow(ctx, `SELECT COUNT(*) FROM dead_letters WHERE workspace_id = ?`, workspaceID).Scan(&n)
	return ds, n, err
}

// CountActivity aggregates requests accepted and attempts started in [from, to].
func (t requestTx) CountActivity(ctx context.Context, workspaceID string, from, to time.Time) (*notify.Counts, error) {
	c := &notify.Counts{ByStatus: map[string]int{}, ByChannel: map[string]int{}, ByChannelStatus: map[string]map[string]int{},
		TestByStatus: map[string]int{}}
	rows, err := t.c.Query(ctx, `SELECT status, channel, test, COUNT(*) FROM notification_requests
		WHERE workspace_id = ? AND requested_at >= ? AND requested_at <= ? GROUP BY status, channel, test`, workspaceID, ms(from), ms(to))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var status, ch string
		var test bool
		var n int
		if err := rows.Scan(&status, &ch, &test, &n); err != nil {
			return nil, err
		}
		c.AddRequests(ch, status, n)
		if test {
			c.TestRequests += n
			c.TestByStatus[status] += n
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var ok *int
	err = t.c.QueryRow(ctx, `SELECT COUNT(*), SUM(CASE WHEN status = 'success' THEN 1 ELSE 0 END) FROM attempts
		WHERE workspace_id = ? AND started_at >= ? AND started_at <= ?`, workspaceID, ms(from), ms(to)).Scan(&c.TotalAttempts, &ok)
	if ok != nil {
		c.SuccessAttempts = *ok
	}
	if err != nil {
		return nil, err
	}
	// Purged rows count through their hourly rollup (retention.go).
	if err := t.rollupActivity(ctx, c, workspaceID, from, to); err != nil {
		return nil, err
	}
	c.FailedAttempts = c.TotalAttempts - c.SuccessAttempts
	return c, nil
}

func (t requestTx) FindBreakers(ctx context.Context, ids []string) (map[string]*notify.BreakerRecord, error) {
	return t.breakers(ctx, `SELECT `+breakerCols+` FROM breakers WHERE provider_account_id IN `, ids, "")
}

func (t requestTx) PutBreaker(ctx context.Context, b *notify.BreakerRecord) error {
	_, err := t.c.Exec(ctx, `INSERT INTO breakers (provider_account_id, state, failures, opened_until, trial_in_flight, updated_at)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (provider_account_id) DO UPDATE SET state = excluded.state, failures = excluded.failures,
		opened_until = excluded.opened_until, trial_in_flight = excluded.trial_in_flight, updated_at = excluded.updated_at`,
		b.ProviderAccountID, b.State, b.Failures, ms(b.OpenedUntil), b.TrialInFlight, ms(b.UpdatedAt))
	return err
}

func (t requestTx) IsSuppressed(ctx context.Context, workspaceID, address string) (bool, error) {
	var n int
	err := t.c.QueryRow(ctx, `SELECT COUNT(*) FROM suppressions WHERE workspace_id = ? AND address = ?`, workspaceID, address).Scan(&n)
	return n > 0, err
}

func (t requestTx) PutSuppression(ctx context.Context, workspaceID, address, reason string, at time.Time) error {
	_, err := t.c.Exec(ctx, `INSERT INTO suppressions (workspace_id, address, reason, created_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (workspace_id, address) DO UPDATE SET reason = excluded.reason`, workspaceID, address, reason, ms(at))
	return err
}
