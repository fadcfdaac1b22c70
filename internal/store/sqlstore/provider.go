package sqlstore

import (
	"context"

	"github.com/notifyd/notifyd/internal/notify"
)

const providerCols = `id, workspace_id, provider_kind, channel, display_name, enabled, config_enc, created_at, updated_at`

func (t providerTx) CreateProviderAccount(ctx context.Context, p *notify.ProviderAccount) error {
	_, err := t.c.Exec(ctx, `INSERT INTO provider_accounts (`+providerCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		p.ID, p.WorkspaceID, p.ProviderKind, string(p.Channel), p.DisplayName, p.Enabled, p.ConfigEnc,
		ms(p.CreatedAt), ms(p.UpdatedAt))
	return err
}

func scanProvider(r Row) (*notify.ProviderAccount, error) {
	var p notify.ProviderAccount
	var ch string
	var c, u int64
	if err := r.Scan(&p.ID, &p.WorkspaceID, &p.ProviderKind, &ch, &p.DisplayName, &p.Enabled, &p.ConfigEnc, &c, &u); err != nil {
		return nil, err
	}
	p.Channel, p.CreatedAt, p.UpdatedAt = notify.Channel(ch), fromMs(c), fromMs(u)
	return &p, nil
}

func (t providerTx) FindProviderAccount(ctx context.Context, workspaceID, id string) (*notify.ProviderAccount, error) {
	return scanProvider(t.c.QueryRow(ctx, `SELECT `+providerCols+` FROM provider_accounts WHERE workspace_id = ? AND id = ?`, workspaceID, id))
}

// FindProviderAccounts lists in creation order (SPEC "List providers").
func (t providerTx) FindProviderAccounts(ctx context.Context, workspaceID string) ([]*notify.ProviderAccount, error) {
	return queryAll(ctx, t.c, scanProvider, `SELECT `+providerCols+` FROM provider_accounts WHERE workspace_id = ? ORDER BY created_at, id`, workspaceID)
}

func (t providerTx) UpdateProviderAccount(ctx context.Context, p *notify.ProviderAccount) error {
	return expectOne(t.c.Exec(ctx, `UPDATE provider_accounts SET display_name = ?, enabled = ?, config_enc = ?, updated_at = ?
		WHERE workspace_id = ? AND id = ?`, p.DisplayName, p.Enabled, p.ConfigEnc, ms(p.UpdatedAt), p.WorkspaceID, p.ID))
}

// ReplaceRoutes deletes the workspace's routes and inserts routes, in the
// caller's transaction, so the replacement is atomic.
func (t providerTx) ReplaceRoutes(ctx context.Context, workspaceID string, routes []*notify.Route) error {
	if _, err := t.c.Exec(ctx, `DELETE FROM routes WHERE workspace_id = ?`, workspaceID); err != nil {
		return err
	}
	for _, r := range routes {
		if _, err := t.c.Exec(ctx, `INSERT INTO routes (id, workspace_id, channel, provider_account_id, priority, enabled, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, r.ID, workspaceID, string(r.Channel), r.ProviderAccountID, r.Priority, r.Enabled, ms(r.CreatedAt)); err != nil {
			return err
		}
	}
	return nil
}

// FindRoutes lists by channel then priority (SPEC "Routes").
func (t providerTx) FindRoutes(ctx context.Context, workspaceID string) ([]*notify.Route, error) {
	return queryAll(ctx, t.c, scanRoute, `SELECT id, workspace_id, channel, provider_account_id, priority, enabled, created_at
		FROM routes WHERE workspace_id = ? ORDER BY channel, priority, id`, workspaceID)
}

func scanRoute(r Row) (*notify.Route, error) {
	var x notify.Route
	var ch string
	var c int64
	if err := r.Scan(&x.ID, &x.WorkspaceID, &ch, &x.ProviderAccountID, &x.Priority, &x.Enabled, &c); err != nil {
		return nil, err
	}
	x.Channel, x.CreatedAt = notify.Channel(ch), fromMs(c)
	return &x, nil
}
