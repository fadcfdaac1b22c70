package sqlstore

import (
	"context"
	"strings"

	"github.com/notifyd/notifyd/internal/notify"
)

const consentCols = `recipient_id, workspace_id, kind, given_at, source, recorded_by, actor_id`

func (t recipientTx) PutConsent(ctx context.Context, c *notify.RecipientConsent) error {
	_, err := t.c.Exec(ctx, `INSERT INTO recipient_consents (`+consentCols+`) VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (recipient_id, kind) DO UPDATE SET given_at = excluded.given_at, source = excluded.source,
		recorded_by = excluded.recorded_by, actor_id = excluded.actor_id`,
		c.RecipientID, c.WorkspaceID, c.Kind, ms(c.GivenAt), c.Source, c.RecordedBy, c.ActorID)
	return err
}

func (t recipientTx) DeleteConsent(ctx context.Context, workspaceID, recipientID, kind string) error {
	return expectOne(t.c.Exec(ctx, `DELETE FROM recipient_consents WHERE workspace_id = ? AND recipient_id = ? AND kind = ?`,
		workspaceID, recipientID, kind))
}

func scanConsent(row Row) (*notify.RecipientConsent, error) {
	var c notify.RecipientConsent
	var given int64
	if err := row.Scan(&c.RecipientID, &c.WorkspaceID, &c.Kind, &given, &c.Source, &c.RecordedBy, &c.ActorID); err != nil {
		return nil, err
	}
	c.GivenAt = fromMs(given)
	return &c, nil
}

func (t recipientTx) FindConsents(ctx context.Context, workspaceID string, recipientIDs []string) (map[string][]*notify.RecipientConsent, error) {
	out := map[string][]*notify.RecipientConsent{}
	if len(recipientIDs) == 0 {
		return out, nil
	}
	args := []any{workspaceID}
	for _, id := range recipientIDs {
		args = append(args, id)
	}
	cs, err := queryAll(ctx, t.c, scanConsent, `SELECT `+consentCols+` FROM recipient_consents WHERE workspace_id = ? AND recipient_id IN (?`+
		strings.Repeat(", ?", len(recipientIDs)-1)+`) ORDER BY kind`, args...)
	if err != nil {
		return nil, err
	}
	for _, c := range cs {
		out[c.RecipientID] = append(out[c.RecipientID], c)
	}
	return out, nil
}
