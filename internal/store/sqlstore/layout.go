package sqlstore

import (
	"context"

	"github.com/notifyd/notifyd/internal/notify"
)

const layoutSelect = `SELECT id, workspace_id, name, html, text, created_at, updated_at FROM layouts`

func scanLayout(row Row) (*notify.Layout, error) {
	var l notify.Layout
	var html, text *string
	var c, u int64
	if err := row.Scan(&l.ID, &l.WorkspaceID, &l.Name, &html, &text, &c, &u); err != nil {
		return nil, err
	}
	l.HTML, l.Text, l.CreatedAt, l.UpdatedAt = str(html), str(text), fromMs(c), fromMs(u)
	return &l, nil
}

func (t templateTx) CreateLayout(ctx context.Context, l *notify.Layout) error {
	_, err := t.c.Exec(ctx, `INSERT INTO layouts (id, workspace_id, name, html, text, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		l.ID, l.WorkspaceID, l.Name, nullable(l.HTML), nullable(l.Text), ms(l.CreatedAt), ms(l.UpdatedAt))
	return err
}

func (t templateTx) UpdateLayout(ctx context.Context, l *notify.Layout) error {
	return expectOne(t.c.Exec(ctx, `UPDATE layouts SET name = ?, html = ?, text = ?, updated_at = ? WHERE workspace_id = ? AND id = ?`,
		l.Name, nullable(l.HTML), nullable(l.Text), ms(l.UpdatedAt), l.WorkspaceID, l.ID))
}

func (t templateTx) FindLayout(ctx context.Context, workspaceID, id string) (*notify.Layout, error) {
	return scanLayout(t.c.QueryRow(ctx, layoutSelect+` WHERE workspace_id = ? AND id = ?`, workspaceID, id))
}

func (t templateTx) FindLayoutByName(ctx context.Context, workspaceID, name string) (*notify.Layout, error) {
	return scanLayout(t.c.QueryRow(ctx, layoutSelect+` WHERE workspace_id = ? AND name = ?`, workspaceID, name))
}

func (t templateTx) FindLayouts(ctx context.Context, workspaceID string) ([]*notify.Layout, error) {
	return queryAll(ctx, t.c, scanLayout, layoutSelect+` WHERE workspace_id = ? ORDER BY created_at, id`, workspaceID)
}

func (t templateTx) DeleteLayout(ctx context.Context, workspaceID, id string) error {
	return expectOne(t.c.Exec(ctx, `DELETE FROM layouts WHERE workspace_id = ? AND id = ?`, workspaceID, id))
}

func (t templateTx) CountLayoutUses(ctx context.Context, workspaceID, id string) (int, error) {
	var n int
	err := t.c.QueryRow(ctx, `SELECT COUNT(*) FROM template_versions v JOIN templates t ON t.id = v.template_id
		WHERE t.workspace_id = ? AND v.layout_id = ?`, workspaceID, id).Scan(&n)
	return n, err
}
