package sqlstore

import (
	"context"

	"github.com/notifyd/notifyd/internal/notify"
)

// hookTx holds the verbs of inbound hooks (issue 36, item 3).
type hookTx struct{ *Tx }

const hookCols = `id, workspace_id, name, format, channel, addresses, recipient_ids, template_code, category, rate_limit,
	enabled, token_hash, token_rotated_at, created_at, updated_at`

func scanHook(row Row) (*notify.InboundHook, error) {
	var h notify.InboundHook
	var addrs, ids string
	var rot, cr, up int64
	if err := row.Scan(&h.ID, &h.WorkspaceID, &h.Name, &h.Format, &h.Channel, &addrs, &ids, &h.TemplateCode, &h.Category,
		&h.RateLimit, &h.Enabled, &h.TokenHash, &rot, &cr, &up); err != nil {
		return nil, err
	}
	if err := fromJSON(addrs, &h.Addresses); err != nil {
		return nil, err
	}
	if err := fromJSON(ids, &h.RecipientIDs); err != nil {
		return nil, err
	}
	if h.Addresses == nil {
		h.Addresses = []string{}
	}
	if h.RecipientIDs == nil {
		h.RecipientIDs = []string{}
	}
	h.TokenRotatedAt, h.CreatedAt, h.UpdatedAt = fromMs(rot), fromMs(cr), fromMs(up)
	return &h, nil
}

// jsonList is a list column: never null.
func jsonList(v []string) string {
	if v == nil {
		return "[]"
	}
	return toJSON(v)
}

// CreateInboundHook uses DO NOTHING so a duplicate name answers
// ErrConflict without aborting the PostgreSQL transaction.
func (t hookTx) CreateInboundHook(ctx context.Context, h *notify.InboundHook) error {
	n, err := t.c.Exec(ctx, `INSERT INTO inbound_hooks (`+hookCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT DO NOTHING`, h.ID, h.WorkspaceID, h.Name, h.Format, string(h.Channel), jsonList(h.Addresses),
		jsonList(h.RecipientIDs), h.TemplateCode, h.Category, h.RateLimit, h.Enabled, h.TokenHash, ms(h.TokenRotatedAt),
		ms(h.CreatedAt), ms(h.UpdatedAt))
	if err != nil {
		return err
	}
	if n == 0 {
		return notify.ErrConflict
	}
	return nil
}

func (t hookTx) FindInboundHook(ctx context.Context, workspaceID, id string) (*notify.InboundHook, error) {
	return scanHook(t.c.QueryRow(ctx, `SELECT `+hookCols+` FROM inbound_hooks WHERE workspace_id = ? AND id = ?`, workspaceID, id))
}

func (t hookTx) FindInboundHooks(ctx context.Context, workspaceID string) ([]*notify.InboundHook, error) {
	return queryAll(ctx, t.c, scanHook, `SELECT `+hookCols+` FROM inbound_hooks WHERE workspace_id = ? ORDER BY name, id`, workspaceID)
}

func (t hookTx) FindInboundHookByToken(ctx context.Context, tokenHash string) (*notify.InboundHook, error) {
	return scanHook(t.c.QueryRow(ctx, `SELECT `+hookCols+` FROM inbound_hooks WHERE token_hash = ?`, tokenHash))
}

func (t hookTx) UpdateInboundHook(ctx context.Context, h *notify.InboundHook) error {
	return expectOne(t.c.Exec(ctx, `UPDATE inbound_hooks SET name = ?, format = ?, channel = ?, addresses = ?, recipient_ids = ?,
		template_code = ?, category = ?, rate_limit = ?, enabled = ?, token_hash = ?, token_rotated_at = ?, updated_at = ?
		WHERE workspace_id = ? AND id = ?`, h.Name, h.Format, string(h.Channel), jsonList(h.Addresses), jsonList(h.RecipientIDs),
		h.TemplateCode, h.Category, h.RateLimit, h.Enabled, h.TokenHash, ms(h.TokenRotatedAt), ms(h.UpdatedAt), h.WorkspaceID, h.ID))
}

func (t hookTx) DeleteInboundHook(ctx context.Context, workspaceID, id string) error {
	return expectOne(t.c.Exec(ctx, `DELETE FROM inbound_hooks WHERE workspace_id = ? AND id = ?`, workspaceID, id))
}
