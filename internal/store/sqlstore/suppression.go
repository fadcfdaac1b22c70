package sqlstore

import (
	"context"
	"strings"

	"github.com/notifyd/notifyd/internal/notify"
)

func scanSuppression(row Row) (*notify.Suppression, error) {
	var s notify.Suppression
	var at int64
	if err := row.Scan(&s.WorkspaceID, &s.Address, &s.Reason, &at); err != nil {
		return nil, err
	}
	s.CreatedAt = fromMs(at)
	return &s, nil
}

// FindSuppressions pages newest first by (created_at, address).
func (t newsletterTx) FindSuppressions(ctx context.Context, workspaceID string, f notify.SuppressionFilter) ([]*notify.Suppression, error) {
	var where strings.Builder
	args := []any{workspaceID}
	where.WriteString(`workspace_id = ?`)
	if f.Address != "" {
		where.WriteString(` AND address = ?`)
		args = append(args, f.Address)
	}
	if f.Before != nil {
		where.WriteString(` AND (created_at < ? OR (created_at = ? AND address < ?))`)
		args = append(args, ms(f.Before.At), ms(f.Before.At), f.Before.ID)
	}
	args = append(args, f.Limit)
	return queryAll(ctx, t.c, scanSuppression, `SELECT workspace_id, address, reason, created_at FROM suppressions
		WHERE `+where.String()+` ORDER BY created_at DESC, address DESC LIMIT ?`, args...)
}

func (t newsletterTx) FindSuppression(ctx context.Context, workspaceID, address string) (*notify.Suppression, error) {
	return scanSuppression(t.c.QueryRow(ctx, `SELECT workspace_id, address, reason, created_at FROM suppressions
		WHERE workspace_id = ? AND address = ?`, workspaceID, address))
}

func (t newsletterTx) DeleteSuppression(ctx context.Context, workspaceID, address string) error {
	return expectOne(t.c.Exec(ctx, `DELETE FROM suppressions WHERE workspace_id = ? AND address = ?`, workspaceID, address))
}

func (t newsletterTx) FindProviderAccountAnyWorkspace(ctx context.Context, id string) (*notify.ProviderAccount, error) {
	return scanProvider(t.c.QueryRow(ctx, `SELECT `+providerCols+` FROM provider_accounts WHERE id = ?`, id))
}

func (t newsletterTx) FindCallbackSecret(ctx context.Context, providerAccountID string) (*notify.CallbackSecret, error) {
	var s notify.CallbackSecret
	var prev *string
	var at int64
	err := t.c.QueryRow(ctx, `SELECT provider_account_id, workspace_id, current_hash, previous_hash, rotated_at
		FROM callback_secrets WHERE provider_account_id = ?`, providerAccountID).Scan(&s.ProviderAccountID, &s.WorkspaceID,
		&s.CurrentHash, &prev, &at)
	if err != nil {
		return nil, err
	}
	s.PreviousHash, s.RotatedAt = str(prev), fromMs(at)
	return &s, nil
}

func (t newsletterTx) FindCallbackSender(ctx context.Context, id string) (*notify.ProviderAccount, *notify.CallbackSecret, error) {
	var p notify.ProviderAccount
	var s notify.CallbackSecret
	var ch string
	var c, u, at int64
	var prev *string
	err := t.c.QueryRow(ctx, `SELECT `+prefixCols("p.", providerCols)+`, s.provider_account_id, s.workspace_id, s.current_hash,
		s.previous_hash, s.rotated_at FROM provider_accounts p JOIN callback_secrets s ON s.provider_account_id = p.id WHERE p.id = ?`, id).
		Scan(&p.ID, &p.WorkspaceID, &p.ProviderKind, &ch, &p.DisplayName, &p.Enabled, &p.ConfigEnc, &c, &u,
			&s.ProviderAccountID, &s.WorkspaceID, &s.CurrentHash, &prev, &at)
	if err != nil {
		return nil, nil, err
	}
	p.Channel, p.CreatedAt, p.UpdatedAt = notify.Channel(ch), fromMs(c), fromMs(u)
	s.PreviousHash, s.RotatedAt = str(prev), fromMs(at)
	return &p, &s, nil
}

func (t newsletterTx) PutCallbackSecret(ctx context.Context, s *notify.CallbackSecret) error {
	_, err := t.c.Exec(ctx, `INSERT INTO callback_secrets (provider_account_id, workspace_id, current_hash, previous_hash, rotated_at)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT (provider_account_id) DO UPDATE SET current_hash = excluded.current_hash,
		previous_hash = excluded.previous_hash, rotated_at = excluded.rotated_at`,
		s.ProviderAccountID, s.WorkspaceID, s.CurrentHash, nullable(s.PreviousHash), ms(s.RotatedAt))
	return err
}

// FindAttemptByMessageID checks the workspace after the lookup: with
// workspace_id in the WHERE clause SQLite's planner prefers the workspace
// time index and scans the workspace's whole history.
func (t newsletterTx) FindAttemptByMessageID(ctx context.Context, workspaceID, providerAccountID, messageID string) (*notify.Attempt, error) {
	a, err := scanAttempt(t.c.QueryRow(ctx, `SELECT `+attemptCols+` FROM attempts WHERE provider_account_id = ? AND provider_message_id = ?
		ORDER BY started_at DESC, id DESC LIMIT 1`, providerAccountID, messageID))
	if err == nil && a.WorkspaceID != workspaceID {
		return nil, notify.ErrNotFound
	}
	return a, err
}

const feedbackCols = `id, workspace_id, provider_account_id, provider_message_id, request_id, attempt_id, recipient_address, type,
	bounce_type, detail, suppressed, vendor_event_id, occurred_at, received_at`

func (t newsletterTx) CreateDeliveryFeedback(ctx context.Context, f *notify.DeliveryFeedback) (bool, error) {
	n, err := t.c.Exec(ctx, `INSERT INTO delivery_feedback (`+feedbackCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (provider_account_id, vendor_event_id) DO NOTHING`,
		f.ID, f.WorkspaceID, f.ProviderAccountID, f.ProviderMessageID, nullable(f.RequestID), nullable(f.AttemptID), f.RecipientAddress,
		f.Type, nullable(f.BounceType), nullable(f.Detail), f.Suppressed, f.VendorEventID, ms(f.OccurredAt), ms(f.ReceivedAt))
	return n > 0, err
}

func scanFeedback(row Row) (*notify.DeliveryFeedback, error) {
	var f notify.DeliveryFeedback
	var req, att, bt, detail *string
	var occ, rec int64
	if err := row.Scan(&f.ID, &f.WorkspaceID, &f.ProviderAccountID, &f.ProviderMessageID, &req, &att, &f.RecipientAddress, &f.Type,
		&bt, &detail, &f.Suppressed, &f.VendorEventID, &occ, &rec); err != nil {
		return nil, err
	}
	f.RequestID, f.AttemptID, f.BounceType, f.Detail = str(req), str(att), str(bt), str(detail)
	f.OccurredAt, f.ReceivedAt = fromMs(occ), fromMs(rec)
	return &f, nil
}

// attachFeedback fills Attempt.Feedback of as with one query; attempts
// without feedback keep a nil slice.
func (t newsletterTx) attachFeedback(ctx context.Context, workspaceID string, as []*notify.Attempt) error {
	var ids []any
	byID := map[string]*notify.Attempt{}
	for _, a := range as {
		if a.Success && a.ProviderMessageID != "" {
			ids = append(ids, a.ID)
			byID[a.ID] = a
		}
	}
	if len(ids) == 0 {
		return nil
	}
	fs, err := queryAll(ctx, t.c, scanFeedback, `SELECT `+feedbackCols+` FROM delivery_feedback WHERE attempt_id IN (?`+
		strings.Repeat(", ?", len(ids)-1)+`) AND workspace_id = ? ORDER BY received_at, id`, append(ids, workspaceID)...)
	for _, f := range fs {
		if a := byID[f.AttemptID]; a != nil {
			a.Feedback = append(a.Feedback, f)
		}
	}
	return err
}
