package sqlstore

import (
	"context"
	"slices"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
)

// The in-app inbox (issue 33): messages, and each profile's event log
// numbered by its head row (migration 036). Every append records the
// profile on the transaction (Tx.woken), whose commit wakes its streams
// (Store.run: NOTIFY in the transaction on PostgreSQL, in process after
// the commit on SQLite).

const inboxCols = `id, workspace_id, recipient_id, request_id, category, title, body, action_url, data, created_at,
	read_at, seen_at, archived_at`

func scanInboxMessage(row Row) (*notify.InboxMessage, error) {
	var m notify.InboxMessage
	var data *string
	var c int64
	var read, seen, arch *int64
	if err := row.Scan(&m.ID, &m.WorkspaceID, &m.RecipientID, &m.RequestID, &m.Category, &m.Title, &m.Body, &m.ActionURL,
		&data, &c, &read, &seen, &arch); err != nil {
		return nil, err
	}
	if data != nil {
		if err := fromJSON(*data, &m.Data); err != nil {
			return nil, err
		}
	}
	m.CreatedAt, m.ReadAt, m.SeenAt, m.ArchivedAt = fromMs(c), fromMsPtr(read), fromMsPtr(seen), fromMsPtr(arch)
	return &m, nil
}

// inboxEntry is one event to append to a log.
type inboxEntry struct {
	typ, messageID string
	at             time.Time
}

// appendInbox appends es to the log of profile recipientID: the head row
// gives the numbers (and holds its lock until the transaction ends).
func (t inboxTx) appendInbox(ctx context.Context, workspaceID, recipientID string, es []inboxEntry) error {
	if len(es) == 0 {
		return nil
	}
	var head int64
	if err := t.c.QueryRow(ctx, `INSERT INTO inbox_heads (recipient_id, workspace_id, seq) VALUES (?, ?, ?)
		ON CONFLICT (recipient_id) DO UPDATE SET seq = inbox_heads.seq + excluded.seq RETURNING seq`,
		recipientID, workspaceID, len(es)).Scan(&head); err != nil {
		return err
	}
	first := head - int64(len(es)) + 1
	for i, e := range es {
		if _, err := t.c.Exec(ctx, `INSERT INTO inbox_events (recipient_id, seq, workspace_id, type, message_id, created_at)
			VALUES (?, ?, ?, ?, ?, ?)`, recipientID, first+int64(i), workspaceID, e.typ, e.messageID, ms(e.at)); err != nil {
			return err
		}
	}
	if !slices.Contains(t.woken, recipientID) {
		t.woken = append(t.woken, recipientID)
	}
	return nil
}

func (t inboxTx) CreateInboxMessages(ctx context.Context, msgs []*notify.InboxMessage) error {
	// One profile after the other, in one order for every process, so
	// two deliveries never wait on each other's head rows in a cycle.
	sorted := slices.Clone(msgs)
	slices.SortStableFunc(sorted, func(a, b *notify.InboxMessage) int {
		if a.RecipientID != b.RecipientID {
			if a.RecipientID < b.RecipientID {
				return -1
			}
			return 1
		}
		return 0
	})
	for i := 0; i < len(sorted); {
		j := i
		var es []inboxEntry
		for ; j < len(sorted) && sorted[j].RecipientID == sorted[i].RecipientID; j++ {
			m := sorted[j]
			n, err := t.c.Exec(ctx, `INSERT INTO inbox_messages (`+inboxCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
				ON CONFLICT (workspace_id, request_id) DO NOTHING`, m.ID, m.WorkspaceID, m.RecipientID, m.RequestID, m.Category,
				m.Title, m.Body, m.ActionURL, jsonOrNil(m.Data, m.Data == nil), ms(m.CreatedAt), msPtr(m.ReadAt), msPtr(m.SeenAt),
				msPtr(m.ArchivedAt))
			if err != nil {
				return err
			}
			if n > 0 {
				es = append(es, inboxEntry{notify.InboxEventCreated, m.ID, m.CreatedAt})
			}
		}
		if err := t.appendInbox(ctx, sorted[i].WorkspaceID, sorted[i].RecipientID, es); err != nil {
			return err
		}
		i = j
	}
	return nil
}

func (t inboxTx) HoldRecipientRows(ctx context.Context, ids []string) (map[string]string, error) {
	out := map[string]string{}
	if len(ids) == 0 {
		return out, nil
	}
	// On PostgreSQL under a key-share lock, which an erasure's DELETE
	// waits for; SQLite's one writer cannot interleave one.
	q := `SELECT id, workspace_id FROM recipients WHERE id IN (` + placeholders(len(ids)) + `)`
	if locksRows(t.c) {
		q += ` FOR KEY SHARE`
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	pairs, err := queryAll(ctx, t.c, func(r Row) ([2]string, error) {
		var p [2]string
		return p, r.Scan(&p[0], &p[1])
	}, q, args...)
	for _, p := range pairs {
		out[p[0]] = p[1]
	}
	return out, err
}

// FindInboxMessages pages by (created_at, id) descending.
func (t inboxTx) FindInboxMessages(ctx context.Context, workspaceID, recipientID string, f notify.InboxFilter) ([]*notify.InboxMessage, error) {
	where := ` WHERE workspace_id = ? AND recipient_id = ?`
	args := []any{workspaceID, recipientID}
	if f.Archived {
		where += ` AND archived_at IS NOT NULL`
	} else {
		where += ` AND archived_at IS NULL`
	}
	if f.Unread {
		where += ` AND read_at IS NULL`
	}
	if f.Unseen {
		where += ` AND seen_at IS NULL`
	}
	if f.Category != "" {
		where += ` AND category = ?`
		args = append(args, f.Category)
	}
	if f.Before != nil {
		where += ` AND (created_at < ? OR (created_at = ? AND id < ?))`
		args = append(args, ms(f.Before.At), ms(f.Before.At), f.Before.ID)
	}
	return queryAll(ctx, t.c, scanInboxMessage, `SELECT `+inboxCols+` FROM inbox_messages`+where+
		` ORDER BY created_at DESC, id DESC LIMIT ?`, append(args, f.Limit)...)
}

func (t inboxTx) CountInbox(ctx context.Context, workspaceID, recipientID string) (notify.InboxCounts, error) {
	var c notify.InboxCounts
	err := t.c.QueryRow(ctx, inboxCountsOf, workspaceID, recipientID).Scan(&c.Unread, &c.Unseen)
	return c, err
}

// inboxChanges are the statements of each change: the SET clause and
// the condition of a message it changes. Reading a message sees it.
var inboxChanges = map[notify.InboxOp]struct{ set, when string }{
	notify.InboxRead:      {`read_at = ?, seen_at = COALESCE(seen_at, ?)`, `read_at IS NULL`},
	notify.InboxSeen:      {`seen_at = ?`, `seen_at IS NULL`},
	notify.InboxArchive:   {`archived_at = ?`, `archived_at IS NULL`},
	notify.InboxUnarchive: {`archived_at = NULL`, `archived_at IS NOT NULL`},
}

func (t inboxTx) ChangeInbox(ctx context.Context, workspaceID, recipientID string, c notify.InboxChange) ([]*notify.InboxMessage, error) {
	scope, args := ` WHERE workspace_id = ? AND recipient_id = ?`, []any{workspaceID, recipientID}
	all := c.MessageID == ""
	if all {
		// Every message the op changes: archived ones are left as they are.
		scope += ` AND archived_at IS NULL`
	} else {
		scope += ` AND id = ?`
		args = append(args, c.MessageID)
		var one int
		if err := t.c.QueryRow(ctx, `SELECT 1 FROM inbox_messages`+scope, args...).Scan(&one); err != nil {
			return nil, err
		}
	}
	var out []*notify.InboxMessage
	var err error
	if c.Op == notify.InboxDelete {
		if all {
			return nil, notify.Invalid("delete names one message")
		}
		out, err = queryAll(ctx, t.c, scanInboxMessage, `DELETE FROM inbox_messages`+scope+` RETURNING `+inboxCols, args...)
	} else {
		ch, ok := inboxChanges[c.Op]
		if !ok || (all && c.Op == notify.InboxUnarchive) {
			return nil, notify.Invalid("%s is not a change of every message", c.Op)
		}
		var set []any
		switch c.Op {
		case notify.InboxRead:
			set = []any{ms(c.At), ms(c.At)}
		case notify.InboxSeen, notify.InboxArchive:
			set = []any{ms(c.At)}
		}
		out, err = queryAll(ctx, t.c, scanInboxMessage, `UPDATE inbox_messages SET `+ch.set+scope+` AND `+ch.when+` RETURNING `+inboxCols,
			append(set, args...)...)
	}
	if err != nil || len(out) == 0 {
		return nil, err
	}
	return out, t.appendInbox(ctx, workspaceID, recipientID, []inboxEntry{{c.Op.EventType(all), c.MessageID, c.At}})
}

// inboxEventsAfter reads a profile's log after a sequence number, each
// event with its message (none for an event of all messages, or of one
// deleted since).
var inboxEventsAfter = `SELECT e.seq, e.type, e.message_id, e.created_at, ` + qualified("m", inboxCols) + `
	FROM inbox_events e LEFT JOIN inbox_messages m ON m.id = e.message_id AND m.recipient_id = e.recipient_id
	WHERE e.recipient_id = ? AND e.workspace_id = ? AND e.seq > ? ORDER BY e.seq LIMIT ?`

// inboxCountsOf counts a profile's unread and unseen messages.
const inboxCountsOf = `SELECT COALESCE(SUM(CASE WHEN read_at IS NULL THEN 1 ELSE 0 END), 0),
	COALESCE(SUM(CASE WHEN seen_at IS NULL THEN 1 ELSE 0 END), 0)
	FROM inbox_messages WHERE workspace_id = ? AND recipient_id = ? AND archived_at IS NULL`

func scanInboxEvent(row Row) (*notify.InboxEvent, error) {
	var e notify.InboxEvent
	var at int64
	var id, ws, rid, req, cat, title, body, url, data *string
	var created, read, seen, arch *int64
	if err := row.Scan(&e.Seq, &e.Type, &e.MessageID, &at, &id, &ws, &rid, &req, &cat, &title, &body, &url, &data,
		&created, &read, &seen, &arch); err != nil {
		return nil, err
	}
	e.At = fromMs(at)
	if id != nil {
		m := &notify.InboxMessage{ID: *id, WorkspaceID: *ws, RecipientID: *rid, RequestID: *req, Category: *cat, Title: *title,
			Body: *body, ActionURL: *url, CreatedAt: fromMs(*created), ReadAt: fromMsPtr(read), SeenAt: fromMsPtr(seen),
			ArchivedAt: fromMsPtr(arch)}
		if data != nil {
			if err := fromJSON(*data, &m.Data); err != nil {
				return nil, err
			}
		}
		e.Message = m
	}
	return &e, nil
}

func (t inboxTx) FollowInbox(ctx context.Context, workspaceID, recipientID string, after int64, limit int) ([]*notify.InboxEvent, notify.InboxCounts, error) {
	var es []*notify.InboxEvent
	var c notify.InboxCounts
	err := pipeline(ctx, t.c, []Read{
		{SQL: inboxEventsAfter, Args: []any{recipientID, workspaceID, after, limit}, Scan: collect(&es, scanInboxEvent)},
		{SQL: inboxCountsOf, Args: []any{workspaceID, recipientID}, Scan: func(rows Rows) error {
			if rows.Next() {
				return rows.Scan(&c.Unread, &c.Unseen)
			}
			return nil
		}},
	})
	return es, c, err
}

func (t inboxTx) FindInboxEvents(ctx context.Context, workspaceID, recipientID string, after int64, limit int) ([]*notify.InboxEvent, notify.InboxLog, error) {
	var lg notify.InboxLog
	if err := t.c.QueryRow(ctx, `SELECT COALESCE((SELECT MIN(seq) FROM inbox_events WHERE recipient_id = ? AND workspace_id = ?), 0),
		COALESCE((SELECT seq FROM inbox_heads WHERE recipient_id = ? AND workspace_id = ?), 0)`,
		recipientID, workspaceID, recipientID, workspaceID).Scan(&lg.Oldest, &lg.Newest); err != nil {
		return nil, lg, err
	}
	if limit == 0 {
		return nil, lg, nil
	}
	es, err := queryAll(ctx, t.c, scanInboxEvent, inboxEventsAfter, recipientID, workspaceID, after, limit)
	return es, lg, err
}

func (t inboxTx) FindInboxMessagesOfRequest(ctx context.Context, workspaceID, requestID string) ([]*notify.InboxMessage, error) {
	return queryAll(ctx, t.c, scanInboxMessage, `SELECT `+inboxCols+` FROM inbox_messages WHERE workspace_id = ? AND request_id = ?`,
		workspaceID, requestID)
}

func (t inboxTx) FindInboxSettings(ctx context.Context, workspaceID string) (*notify.InboxSettings, error) {
	s := notify.InboxSettings{WorkspaceID: workspaceID}
	var sealed *string
	var origins string
	var at int64
	if err := t.c.QueryRow(ctx, `SELECT secret_enc, allowed_origins, updated_at FROM inbox_settings WHERE id = ?`,
		workspaceID).Scan(&sealed, &origins, &at); err != nil {
		return nil, err
	}
	s.SecretSealed, s.UpdatedAt = str(sealed), fromMs(at)
	if err := fromJSON(origins, &s.AllowedOrigins); err != nil {
		return nil, err
	}
	return &s, nil
}

func (t inboxTx) PutInboxSettings(ctx context.Context, s *notify.InboxSettings) error {
	origins := s.AllowedOrigins
	if origins == nil {
		origins = []string{}
	}
	_, err := t.c.Exec(ctx, `INSERT INTO inbox_settings (id, secret_enc, allowed_origins, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET secret_enc = excluded.secret_enc, allowed_origins = excluded.allowed_origins,
		updated_at = excluded.updated_at`, s.WorkspaceID, nullable(s.SecretSealed), toJSON(origins), ms(s.UpdatedAt))
	return err
}
