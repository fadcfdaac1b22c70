package sqlstore

import (
	"context"
	"strings"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
)

const ratePolicyCols = `id, workspace_id, api_key_id, window_seconds, max_requests, enabled, updated_at`

func scanRatePolicy(r Row) (*notify.RateLimitPolicy, error) {
	var p notify.RateLimitPolicy
	var u int64
	if err := r.Scan(&p.ID, &p.WorkspaceID, &p.APIKeyID, &p.WindowSeconds, &p.MaxRequests, &p.Enabled, &u); err != nil {
		return nil, err
	}
	p.UpdatedAt = fromMs(u)
	return &p, nil
}

// PutRateLimitPolicy upserts by (workspace_id, api_key_id) and reads the
// stored row back into p.
func (t limitTx) PutRateLimitPolicy(ctx context.Context, p *notify.RateLimitPolicy) error {
	if _, err := t.c.Exec(ctx, `INSERT INTO rate_limit_policies (`+ratePolicyCols+`) VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (workspace_id, api_key_id) DO UPDATE SET window_seconds = excluded.window_seconds,
		max_requests = excluded.max_requests, enabled = excluded.enabled, updated_at = excluded.updated_at`,
		p.ID, p.WorkspaceID, p.APIKeyID, p.WindowSeconds, p.MaxRequests, p.Enabled, ms(p.UpdatedAt)); err != nil {
		return err
	}
	stored, err := t.FindRateLimitPolicy(ctx, p.WorkspaceID, p.APIKeyID)
	if err != nil {
		return err
	}
	*p = *stored
	return nil
}

func (t limitTx) FindRateLimitPolicy(ctx context.Context, workspaceID, apiKeyID string) (*notify.RateLimitPolicy, error) {
	return scanRatePolicy(t.c.QueryRow(ctx, `SELECT `+ratePolicyCols+` FROM rate_limit_policies
		WHERE workspace_id = ? AND api_key_id = ?`, workspaceID, apiKeyID))
}

func (t limitTx) FindRateLimitPolicies(ctx context.Context, workspaceID string) ([]*notify.RateLimitPolicy, error) {
	return queryAll(ctx, t.c, scanRatePolicy, `SELECT `+ratePolicyCols+` FROM rate_limit_policies
		WHERE workspace_id = ? ORDER BY api_key_id, id`, workspaceID)
}

func (t limitTx) RateCount(ctx context.Context, scopeKey string, windowStart time.Time) (int, error) {
	var n int
	err := t.c.QueryRow(ctx, `SELECT count FROM rate_limit_counters WHERE scope_key = ? AND window_start = ?`,
		scopeKey, ms(windowStart)).Scan(&n)
	if IsNotFound(err) {
		return 0, nil
	}
	return n, err
}

func (t limitTx) IncrementRate(ctx context.Context, scopeKey string, windowStart time.Time) error {
	_, err := t.c.Exec(ctx, `INSERT INTO rate_limit_counters (scope_key, window_start, count) VALUES (?, ?, 1)
		ON CONFLICT (scope_key, window_start) DO UPDATE SET count = rate_limit_counters.count + 1`,
		scopeKey, ms(windowStart))
	return err
}

func (t limitTx) LockRateCount(ctx context.Context, scopeKey string, windowStart time.Time) (int, error) {
	// The no-op update of an existing row takes its lock (SQLite's write
	// transaction is exclusive anyway).
	var n int
	err := t.c.QueryRow(ctx, `INSERT INTO rate_limit_counters (scope_key, window_start, count) VALUES (?, ?, 0)
		ON CONFLICT (scope_key, window_start) DO UPDATE SET count = rate_limit_counters.count
		RETURNING count`, scopeKey, ms(windowStart)).Scan(&n)
	return n, err
}

func (t limitTx) SetRateCount(ctx context.Context, scopeKey string, windowStart time.Time, n int) error {
	_, err := t.c.Exec(ctx, `UPDATE rate_limit_counters SET count = ? WHERE scope_key = ? AND window_start = ?`,
		n, scopeKey, ms(windowStart))
	return err
}

func (t limitTx) DeleteRateCounters(ctx context.Context, before time.Time) (int, error) {
	n, err := t.c.Exec(ctx, `DELETE FROM rate_limit_counters WHERE window_start < ?`, ms(before))
	return int(n), err
}

const dispatchCols = `id, workspace_id, scope, target_id, rate_per_second, enabled, created_at, updated_at`

func scanDispatchLimit(r Row) (*notify.DispatchLimit, error) {
	var l notify.DispatchLimit
	var c, u int64
	if err := r.Scan(&l.ID, &l.WorkspaceID, &l.Scope, &l.TargetID, &l.RatePerSecond, &l.Enabled, &c, &u); err != nil {
		return nil, err
	}
	l.CreatedAt, l.UpdatedAt = fromMs(c), fromMs(u)
	return &l, nil
}

// PutDispatchLimit upserts by (workspace_id, scope, target_id) and reads
// the stored row back into l.
func (t limitTx) PutDispatchLimit(ctx context.Context, l *notify.DispatchLimit) error {
	if _, err := t.c.Exec(ctx, `INSERT INTO dispatch_limits (`+dispatchCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (workspace_id, scope, target_id) DO UPDATE SET rate_per_second = excluded.rate_per_second,
		enabled = excluded.enabled, updated_at = excluded.updated_at`,
		l.ID, l.WorkspaceID, l.Scope, l.TargetID, l.RatePerSecond, l.Enabled, ms(l.CreatedAt), ms(l.UpdatedAt)); err != nil {
		return err
	}
	stored, err := scanDispatchLimit(t.c.QueryRow(ctx, `SELECT `+dispatchCols+` FROM dispatch_limits
		WHERE workspace_id = ? AND scope = ? AND target_id = ?`, l.WorkspaceID, l.Scope, l.TargetID))
	if err != nil {
		return err
	}
	*l = *stored
	return nil
}

// FindDispatchLimits lists in creation order.
func (t limitTx) FindDispatchLimits(ctx context.Context, workspaceID string) ([]*notify.DispatchLimit, error) {
	return queryAll(ctx, t.c, scanDispatchLimit, `SELECT `+dispatchCols+` FROM dispatch_limits
		WHERE workspace_id = ? ORDER BY created_at, id`, workspaceID)
}

func (t limitTx) DeleteDispatchLimit(ctx context.Context, workspaceID, id string) error {
	return expectOne(t.c.Exec(ctx, `DELETE FROM dispatch_limits WHERE workspace_id = ? AND id = ?`, workspaceID, id))
}

func (t limitTx) DispatchTargetWorkspace(ctx context.Context, scope, targetID string) (string, error) {
	table := "provider_accounts"
	if scope == notify.DispatchScopeAPIKey {
		table = "api_keys"
	}
	var ws string
	err := t.c.QueryRow(ctx, `SELECT workspace_id FROM `+table+` WHERE id = ?`, targetID).Scan(&ws)
	return ws, err
}

func (t limitTx) PutDispatchWorker(ctx context.Context, w *notify.DispatchWorker) error {
	d := w.Demand
	if d == nil {
		d = map[string]float64{}
	}
	_, err := t.c.Exec(ctx, `INSERT INTO dispatch_workers (worker_id, demand, heartbeat_at) VALUES (?, ?, ?)
		ON CONFLICT (worker_id) DO UPDATE SET demand = excluded.demand, heartbeat_at = excluded.heartbeat_at`,
		w.ID, toJSON(d), ms(w.HeartbeatAt))
	return err
}

func (t limitTx) DeleteDispatchWorker(ctx context.Context, id string) error {
	_, err := t.c.Exec(ctx, `DELETE FROM dispatch_workers WHERE worker_id = ?`, id)
	return err
}

func (t limitTx) DeleteStaleDispatchWorkers(ctx context.Context, before time.Time) (int, error) {
	n, err := t.c.Exec(ctx, `DELETE FROM dispatch_workers WHERE heartbeat_at < ?`, ms(before))
	return int(n), err
}

func (t limitTx) FindDispatchWorkers(ctx context.Context, since time.Time) ([]*notify.DispatchWorker, error) {
	return queryAll(ctx, t.c, func(r Row) (*notify.DispatchWorker, error) {
		var w notify.DispatchWorker
		var d string
		var at int64
		if err := r.Scan(&w.ID, &d, &at); err != nil {
			return nil, err
		}
		w.HeartbeatAt = fromMs(at)
		return &w, fromJSON(d, &w.Demand)
	}, `SELECT worker_id, demand, heartbeat_at FROM dispatch_workers WHERE heartbeat_at >= ? ORDER BY worker_id`, ms(since))
}

// RateCounts reads many counters in one statement, matching rows by
// (scope_key, window_start) pairs.
func (t limitTx) RateCounts(ctx context.Context, ws []notify.RateWindow) ([]int, error) {
	out := make([]int, len(ws))
	if len(ws) == 0 {
		return out, nil
	}
	args := make([]any, 0, 2*len(ws))
	for _, w := range ws {
		args = append(args, w.ScopeKey, ms(w.Start))
	}
	rows, err := t.c.Query(ctx, `SELECT scope_key, window_start, count FROM rate_limit_counters
		WHERE (scope_key, window_start) IN ((?, ?)`+strings.Repeat(", (?, ?)", len(ws)-1)+`)`, args...)
	if err != nil {
		return nil, err
	}
	return windowCounts(rows, ws, out)
}

// windowCounts reads (scope_key, window_start, count) rows into out, at
// the index of each row's window in ws, and closes rows.
func windowCounts(rows Rows, ws []notify.RateWindow, out []int) ([]int, error) {
	defer rows.Close()
	for rows.Next() {
		var key string
		var start int64
		var n int
		if err := rows.Scan(&key, &start, &n); err != nil {
			return nil, err
		}
		for i, w := range ws {
			if w.ScopeKey == key && ms(w.Start) == start {
				out[i] = n
			}
		}
	}
	return out, rows.Err()
}

// AddRateCounts upserts many counters in one statement.
func (t limitTx) AddRateCounts(ctx context.Context, ws []notify.RateWindow) ([]int, error) {
	out := make([]int, len(ws))
	if len(ws) == 0 {
		return out, nil
	}
	args := make([]any, 0, 3*len(ws))
	for _, w := range ws {
		args = append(args, w.ScopeKey, ms(w.Start), w.N)
	}
	rows, err := t.c.Query(ctx, `INSERT INTO rate_limit_counters (scope_key, window_start, count) VALUES (?, ?, ?)`+
		strings.Repeat(", (?, ?, ?)", len(ws)-1)+` ON CONFLICT (scope_key, window_start)
		DO UPDATE SET count = rate_limit_counters.count + excluded.count RETURNING scope_key, window_start, count`, args...)
	if err != nil {
		return nil, err
	}
	return windowCounts(rows, ws, out)
}
