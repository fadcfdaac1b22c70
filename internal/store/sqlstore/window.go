package sqlstore

import (
	"context"

	"github.com/notifyd/notifyd/internal/notify"
)

func (t recipientTx) PutSendWindow(ctx context.Context, w *notify.SendWindow) error {
	days := w.Days
	if days == nil {
		days = []string{}
	}
	_, err := t.c.Exec(ctx, `INSERT INTO send_windows (workspace_id, scope, category_id, hours, days, time_zone, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (workspace_id, scope) DO UPDATE SET hours = excluded.hours, days = excluded.days,
		time_zone = excluded.time_zone, updated_at = excluded.updated_at`,
		w.WorkspaceID, w.CategoryID, nullable(w.CategoryID), w.Hours, toJSON(days), w.TimeZone, ms(w.UpdatedAt))
	if err != nil {
		return err
	}
	return t.bumpConfig(ctx, w.WorkspaceID)
}

func (t recipientTx) DeleteSendWindow(ctx context.Context, workspaceID, categoryID string) error {
	if err := expectOne(t.c.Exec(ctx, `DELETE FROM send_windows WHERE workspace_id = ? AND scope = ?`, workspaceID, categoryID)); err != nil {
		return err
	}
	return t.bumpConfig(ctx, workspaceID)
}

// windowSelect reads send windows with their category's key.
const windowSelect = `SELECT w.workspace_id, w.scope, COALESCE(c.key, ''), w.hours, w.days, w.time_zone, w.updated_at
		FROM send_windows w LEFT JOIN categories c ON c.id = w.category_id`

func scanWindow(row Row) (*notify.SendWindow, error) {
	var w notify.SendWindow
	var days string
	var upd int64
	if err := row.Scan(&w.WorkspaceID, &w.CategoryID, &w.CategoryKey, &w.Hours, &days, &w.TimeZone, &upd); err != nil {
		return nil, err
	}
	w.UpdatedAt = fromMs(upd)
	return &w, fromJSON(days, &w.Days)
}

func (t recipientTx) FindSendWindows(ctx context.Context, workspaceID, categoryID string, all bool) ([]*notify.SendWindow, error) {
	q := windowSelect + ` WHERE w.workspace_id = ?`
	args := []any{workspaceID}
	if !all {
		q += ` AND w.scope IN ('', ?)`
		args = append(args, categoryID)
	}
	return queryAll(ctx, t.c, scanWindow, q+` ORDER BY w.scope`, args...)
}
