package sqlstore

import (
	"context"
	"strings"

	"github.com/notifyd/notifyd/internal/notify"
)

const profileCols = `id, workspace_id, external_id, name, phone, email, push_tokens, chat_targets, time_zone, locale,
	attributes, created_at, updated_at`

const profileValues = `(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// profileUpsert is the conflict clause of a put: every field but the
// row's id and createdAt is replaced. RETURNING gives the stored id, which
// is the new one only when the row was inserted.
const profileUpsert = ` ON CONFLICT (workspace_id, external_id) DO UPDATE SET name = excluded.name,
	phone = excluded.phone, email = excluded.email, push_tokens = excluded.push_tokens,
	chat_targets = excluded.chat_targets, time_zone = excluded.time_zone, locale = excluded.locale,
	attributes = excluded.attributes, updated_at = excluded.updated_at
	RETURNING id, created_at`

// profileChunk bounds the rows of one multi-row statement: 13
// parameters a row stays far below the parameter limits of SQLite (32766)
// and PostgreSQL (65535).
const profileChunk = 1000

func scanRecipient(row Row) (*notify.Recipient, error) {
	var r notify.Recipient
	var push, chat, attrs string
	var c, u int64
	if err := row.Scan(&r.ID, &r.WorkspaceID, &r.ExternalID, &r.Name, &r.Phone, &r.Email, &push, &chat, &r.TimeZone,
		&r.Locale, &attrs, &c, &u); err != nil {
		return nil, err
	}
	if err := fromJSON(push, &r.PushTokens); err != nil {
		return nil, err
	}
	if err := fromJSON(chat, &r.ChatTargets); err != nil {
		return nil, err
	}
	if err := fromJSON(attrs, &r.Attributes); err != nil {
		return nil, err
	}
	if r.PushTokens == nil {
		r.PushTokens = []string{}
	}
	if r.ChatTargets == nil {
		r.ChatTargets = map[notify.Channel]string{}
	}
	if r.Attributes == nil {
		r.Attributes = map[string]string{}
	}
	r.CreatedAt, r.UpdatedAt = fromMs(c), fromMs(u)
	return &r, nil
}

func recipientArgs(r *notify.Recipient) []any {
	push, chat, attrs := r.PushTokens, r.ChatTargets, r.Attributes
	if push == nil {
		push = []string{}
	}
	if chat == nil {
		chat = map[notify.Channel]string{}
	}
	if attrs == nil {
		attrs = map[string]string{}
	}
	return []any{r.ID, r.WorkspaceID, r.ExternalID, r.Name, r.Phone, r.Email, toJSON(push), toJSON(chat), r.TimeZone,
		r.Locale, toJSON(attrs), ms(r.CreatedAt), ms(r.UpdatedAt)}
}

func (t recipientTx) PutRecipient(ctx context.Context, r *notify.Recipient) (bool, error) {
	newID := r.ID
	var c int64
	if err := t.c.QueryRow(ctx, `INSERT INTO recipients (`+profileCols+`) VALUES `+profileValues+profileUpsert,
		recipientArgs(r)...).Scan(&r.ID, &c); err != nil {
		return false, err
	}
	r.CreatedAt = fromMs(c)
	return r.ID == newID, t.bumpRecipients(ctx, r.WorkspaceID)
}

func (t recipientTx) FindRecipient(ctx context.Context, workspaceID, externalID string) (*notify.Recipient, error) {
	return scanRecipient(t.c.QueryRow(ctx, `SELECT `+profileCols+` FROM recipients WHERE workspace_id = ? AND external_id = ?`,
		workspaceID, externalID))
}

func (t recipientTx) LockRecipient(ctx context.Context, workspaceID, externalID string) (*notify.Recipient, error) {
	return scanRecipient(t.c.QueryRow(ctx, `UPDATE recipients SET updated_at = updated_at WHERE workspace_id = ? AND external_id = ?
		RETURNING `+profileCols, workspaceID, externalID))
}

// FindRecipients pages by (created_at, id) descending. The search is a
// substring match: external id, email and phone as stored, the name
// lower-cased and as given (SQLite's LOWER folds only ASCII letters).
func (t recipientTx) FindRecipients(ctx context.Context, workspaceID string, f notify.RecipientFilter) ([]*notify.Recipient, error) {
	where := ` WHERE workspace_id = ?`
	args := []any{workspaceID}
	if f.Search != "" {
		p, lower := "%"+likeEscape(f.Search)+"%", "%"+likeEscape(strings.ToLower(f.Search))+"%"
		where += ` AND (external_id LIKE ? ESCAPE '\' OR name LIKE ? ESCAPE '\' OR LOWER(name) LIKE ? ESCAPE '\'
			OR email LIKE ? ESCAPE '\' OR phone LIKE ? ESCAPE '\')`
		args = append(args, p, p, lower, lower, p)
	}
	if f.Before != nil {
		where += ` AND (created_at < ? OR (created_at = ? AND id < ?))`
		args = append(args, ms(f.Before.At), ms(f.Before.At), f.Before.ID)
	}
	return queryAll(ctx, t.c, scanRecipient, `SELECT `+profileCols+` FROM recipients`+where+
		` ORDER BY created_at DESC, id DESC LIMIT ?`, append(args, f.Limit)...)
}

func (t recipientTx) DeleteRecipient(ctx context.Context, workspaceID, externalID string) error {
	// An erased profile's topic subscriptions, workflow runs (with their
	// steps; a pending step's job then finds no run and does nothing) and
	// digest windows (with their payloads) go with it (issue 34).
	for _, q := range []string{`DELETE FROM topic_subscriptions WHERE workspace_id = ? AND recipient_id = ?`,
		`DELETE FROM workflow_digests WHERE workspace_id = ? AND recipient_id = ?`} {
		if _, err := t.c.Exec(ctx, q, workspaceID, externalID); err != nil {
			return err
		}
	}
	if err := workflowTx(t).deleteRuns(ctx, workspaceID, externalID); err != nil {
		return err
	}
	if err := expectOne(t.c.Exec(ctx, `DELETE FROM recipients WHERE workspace_id = ? AND external_id = ?`, workspaceID, externalID)); err != nil {
		return err
	}
	return t.bumpRecipients(ctx, workspaceID)
}

// UpsertRecipients writes statements of profileChunk rows: a bulk call
// of 1,000 profiles is one round trip on either backend.
func (t recipientTx) UpsertRecipients(ctx context.Context, rs []*notify.Recipient) (int, error) {
	created := 0
	for start := 0; start < len(rs); start += profileChunk {
		chunk := rs[start:min(start+profileChunk, len(rs))]
		args := make([]any, 0, len(chunk)*13)
		fresh := make(map[string]bool, len(chunk))
		for _, r := range chunk {
			args = append(args, recipientArgs(r)...)
			fresh[r.ID] = true
		}
		rows, err := t.c.Query(ctx, `INSERT INTO recipients (`+profileCols+`) VALUES `+profileValues+
			strings.Repeat(", "+profileValues, len(chunk)-1)+profileUpsert, args...)
		if err != nil {
			return 0, err
		}
		for rows.Next() {
			var id string
			var c int64
			if err := rows.Scan(&id, &c); err != nil {
				rows.Close()
				return 0, err
			}
			if fresh[id] {
				created++
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return 0, err
		}
	}
	bumped := map[string]bool{}
	for _, r := range rs {
		if !bumped[r.WorkspaceID] {
			bumped[r.WorkspaceID] = true
			if err := t.bumpRecipients(ctx, r.WorkspaceID); err != nil {
				return 0, err
			}
		}
	}
	return created, nil
}
