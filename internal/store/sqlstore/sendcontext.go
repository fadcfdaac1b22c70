package sqlstore

import (
	"context"

	"github.com/notifyd/notifyd/internal/notify"
)

// The acceptance read of a send by recipient id or category, as one
// pipeline: each statement names the profile by external id and the
// category by key (subqueries where it needs their row ids), so none waits
// for another's answer and PostgreSQL gets them in one round trip.
const (
	profileRowOf  = `(SELECT id FROM recipients WHERE workspace_id = ? AND external_id = ?)`
	categoryRowOf = `(SELECT id FROM categories WHERE workspace_id = ? AND key = ?)`
)

func (t preferenceTx) FindSendContext(ctx context.Context, ws string, q notify.SendContextQuery) (*notify.SendContext, error) {
	out := &notify.SendContext{Preferences: &notify.SendPreferences{Default: emptyPreferences()}}
	ext, key := q.RecipientExternalID, q.CategoryKey
	var reads []Read
	if ext != "" {
		reads = append(reads, Read{SQL: `SELECT ` + profileCols + ` FROM recipients WHERE workspace_id = ? AND external_id = ?`,
			Args: []any{ws, ext}, Scan: func(rows Rows) (err error) {
				if rows.Next() {
					if out.Recipient, err = scanRecipient(rows); err != nil {
						return err
					}
					out.Preferences.Recipient, out.Preferences.RecipientRow = emptyPreferences(), out.Recipient.ID
				}
				return nil
			}})
	}
	if key != "" {
		reads = append(reads, Read{SQL: `SELECT ` + categoryCols + ` FROM categories WHERE workspace_id = ? AND key = ?`,
			Args: []any{ws, key}, Scan: func(rows Rows) (err error) {
				if rows.Next() {
					out.Category, err = scanCategory(rows)
					out.Preferences.Category = out.Category
				}
				return err
			}})
	}
	if len(q.Channels) > 0 {
		chans := make([]any, len(q.Channels))
		for i, ch := range q.Channels {
			chans[i] = string(ch)
		}
		// The choices on the channels: their switches, and the category's
		// (a key of none matches no row: category_id = NULL is never true).
		on := ` AND p.channel IN (` + placeholders(len(chans)) + `) AND (p.category_id IS NULL OR p.category_id = ` + categoryRowOf + `)`
		sql := `SELECT 'd', c.key, p.channel, p.allowed FROM preferences p LEFT JOIN categories c ON c.id = p.category_id
			WHERE p.workspace_id = ? AND COALESCE(p.recipient_id, '') = ''` + on
		args := append(append([]any{ws}, chans...), ws, key)
		if ext != "" {
			sql += ` UNION ALL SELECT 'r', c.key, p.channel, p.allowed FROM preferences p LEFT JOIN categories c ON c.id = p.category_id
				WHERE p.recipient_id = ` + profileRowOf + ` AND p.workspace_id = ?` + on
			args = append(append(append(args, ws, ext, ws), chans...), ws, key)
		}
		reads = append(reads, Read{SQL: sql, Args: args, Scan: func(rows Rows) error {
			return scanChoices(rows, func(owner string) *notify.Preferences {
				if owner == "r" {
					return out.Preferences.Recipient // nil: the profile went between the reads
				}
				return out.Preferences.Default
			})
		}})
	}
	reads = append(reads, Read{SQL: windowSelect + ` WHERE w.workspace_id = ? AND w.scope IN ('', ` + categoryRowOf + `) ORDER BY w.scope`,
		Args: []any{ws, ws, key}, Scan: collect(&out.Windows, scanWindow)})
	if q.Consents && ext != "" {
		reads = append(reads, Read{SQL: `SELECT ` + consentCols + ` FROM recipient_consents WHERE workspace_id = ? AND recipient_id = ` +
			profileRowOf + ` ORDER BY kind`, Args: []any{ws, ws, ext}, Scan: collect(&out.Consents, scanConsent)})
	}
	if err := pipeline(ctx, t.c, reads); err != nil {
		return nil, err
	}
	return out, nil
}
