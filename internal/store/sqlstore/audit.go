package sqlstore

import (
	"context"
	"strings"

	"github.com/notifyd/notifyd/internal/notify"
)

func (t webhookTx) CreateAudit(ctx context.Context, e *notify.AuditEntry) error {
	_, err := t.c.Exec(ctx, `INSERT INTO audit_logs (`+auditCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, auditArgs(e)...)
	return err
}

// CreateAudits writes audit entries in bulk (one per item of a bulk action).
func (t webhookTx) CreateAudits(ctx context.Context, es []*notify.AuditEntry) error {
	rows := make([][]any, len(es))
	for i, e := range es {
		rows[i] = auditArgs(e)
	}
	return t.insertRows(ctx, "audit_logs", auditColList, rows, 1000)
}

const auditCols = `id, workspace_id, actor_user_id, action, target_type, target_id, payload, created_at`

var auditColList = splitCols(auditCols)

func auditArgs(e *notify.AuditEntry) []any {
	payload := e.Payload
	if payload == nil {
		payload = map[string]any{}
	}
	return []any{e.ID, e.WorkspaceID, e.ActorUserID, e.Action, e.TargetType, e.TargetID, toJSON(payload), ms(e.CreatedAt)}
}

// FindAudit pages newest first by (created_at, id), a keyset that stays
// stable while new entries arrive.
func (t webhookTx) FindAudit(ctx context.Context, workspaceID string, f notify.AuditFilter) ([]*notify.AuditEntry, error) {
	var where strings.Builder
	args := []any{workspaceID}
	where.WriteString(`workspace_id = ?`)
	if f.Action != "" {
		where.WriteString(` AND action = ?`)
		args = append(args, f.Action)
	}
	if f.TargetType != "" {
		where.WriteString(` AND target_type = ?`)
		args = append(args, f.TargetType)
	}
	if f.Before != nil {
		where.WriteString(` AND (created_at < ? OR (created_at = ? AND id < ?))`)
		args = append(args, ms(f.Before.At), ms(f.Before.At), f.Before.ID)
	}
	args = append(args, f.Limit)
	return queryAll(ctx, t.c, scanAudit, `SELECT id, workspace_id, actor_user_id, action, target_type, target_id, payload, created_at
		FROM audit_logs WHERE `+where.String()+` ORDER BY created_at DESC, id DESC LIMIT ?`, args...)
}

func scanAudit(r Row) (*notify.AuditEntry, error) {
	var e notify.AuditEntry
	var payload string
	var c int64
	if err := r.Scan(&e.ID, &e.WorkspaceID, &e.ActorUserID, &e.Action, &e.TargetType, &e.TargetID, &payload, &c); err != nil {
		return nil, err
	}
	e.CreatedAt = fromMs(c)
	if err := fromJSON(payload, &e.Payload); err != nil {
		return nil, err
	}
	return &e, nil
}
