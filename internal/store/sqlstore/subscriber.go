package sqlstore

import (
	"context"
	"strings"

	"github.com/notifyd/notifyd/internal/notify"
)

const subscriberCols = `id, workspace_id, channel, address, name, consent_status, consent_source, attributes,
	unsubscribe_token, consented_at, unsubscribed_at, created_at, updated_at`

// subscriberColsOf is subscriberCols qualified by a table alias.
func subscriberColsOf(alias string) string {
	cols := strings.Split(subscriberCols, ",")
	for i, c := range cols {
		cols[i] = alias + "." + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}

// subscriberChunk bounds the rows of one multi-row statement: 13
// parameters a row stays far below the parameter limits of SQLite (32766)
// and PostgreSQL (65535).
const subscriberChunk = 500

func scanSubscriber(row Row) (*notify.Subscriber, error) {
	var s notify.Subscriber
	var ch, attrs string
	var cons, unsub *int64
	var c, u int64
	if err := row.Scan(&s.ID, &s.WorkspaceID, &ch, &s.Address, &s.Name, &s.ConsentStatus, &s.ConsentSource, &attrs,
		&s.UnsubscribeToken, &cons, &unsub, &c, &u); err != nil {
		return nil, err
	}
	s.Channel = notify.Channel(ch)
	if err := fromJSON(attrs, &s.Attributes); err != nil {
		return nil, err
	}
	if s.Attributes == nil {
		s.Attributes = map[string]string{}
	}
	s.ConsentedAt, s.UnsubscribedAt = fromMsPtr(cons), fromMsPtr(unsub)
	s.CreatedAt, s.UpdatedAt = fromMs(c), fromMs(u)
	return &s, nil
}

func subscriberArgs(s *notify.Subscriber) []any {
	attrs := s.Attributes
	if attrs == nil {
		attrs = map[string]string{}
	}
	return []any{s.ID, s.WorkspaceID, string(s.Channel), s.Address, s.Name, s.ConsentStatus, s.ConsentSource, toJSON(attrs),
		s.UnsubscribeToken, msPtr(s.ConsentedAt), msPtr(s.UnsubscribedAt), ms(s.CreatedAt), ms(s.UpdatedAt)}
}

const subscriberValues = `(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// CreateSubscriber uses DO NOTHING so a duplicate answers ErrConflict
// without aborting the PostgreSQL transaction.
func (t newsletterTx) CreateSubscriber(ctx context.Context, s *notify.Subscriber) error {
	n, err := t.c.Exec(ctx, `INSERT INTO subscribers (`+subscriberCols+`) VALUES `+subscriberValues+` ON CONFLICT DO NOTHING`,
		subscriberArgs(s)...)
	if err != nil {
		return err
	}
	if n == 0 {
		return notify.ErrConflict
	}
	return nil
}

func (t newsletterTx) FindSubscriber(ctx context.Context, workspaceID, id string) (*notify.Subscriber, error) {
	return scanSubscriber(t.c.QueryRow(ctx, `SELECT `+subscriberCols+` FROM subscribers WHERE workspace_id = ? AND id = ?`, workspaceID, id))
}

func (t newsletterTx) LockSubscriber(ctx context.Context, workspaceID, id string) (*notify.Subscriber, error) {
	return scanSubscriber(t.c.QueryRow(ctx, `UPDATE subscribers SET updated_at = updated_at WHERE workspace_id = ? AND id = ?
		RETURNING `+subscriberCols, workspaceID, id))
}

func (t newsletterTx) FindSubscriberByToken(ctx context.Context, token string) (*notify.Subscriber, error) {
	return scanSubscriber(t.c.QueryRow(ctx, `SELECT `+subscriberCols+` FROM subscribers WHERE unsubscribe_token = ?`, token))
}

func (t newsletterTx) FindSubscribersByAddress(ctx context.Context, workspaceID string, channel notify.Channel, addresses []string) (map[string]*notify.Subscriber, error) {
	out := make(map[string]*notify.Subscriber, len(addresses))
	for start := 0; start < len(addresses); start += subscriberChunk {
		chunk := addresses[min(start, len(addresses)):min(start+subscriberChunk, len(addresses))]
		args := make([]any, 0, len(chunk)+2)
		args = append(args, workspaceID, string(channel))
		for _, a := range chunk {
			args = append(args, a)
		}
		// A join with a VALUES list, not IN (...): PostgreSQL plans a long
		// IN list of parameters as a scan comparing every row to every
		// item. CROSS JOIN makes SQLite loop over the list and probe the
		// unique index; PostgreSQL treats it as an inner join it may reorder.
		subs, err := queryAll(ctx, t.c, scanSubscriber, `SELECT `+subscriberColsOf("s")+`
			FROM (VALUES (?)`+strings.Repeat(", (?)", len(chunk)-1)+`) AS v CROSS JOIN subscribers s
			WHERE s.workspace_id = ? AND s.channel = ? AND s.address = v.column1`, append(args[2:], args[0], args[1])...)
		if err != nil {
			return nil, err
		}
		for _, s := range subs {
			out[s.Address] = s
		}
	}
	return out, nil
}

// likeEscape makes s a literal LIKE pattern (escape character '\').
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

func (t newsletterTx) FindSubscribers(ctx context.Context, workspaceID string, f notify.SubscriberFilter) ([]*notify.Subscriber, int, error) {
	where := ` WHERE workspace_id = ?`
	args := []any{workspaceID}
	if f.Channel != "" {
		where += ` AND channel = ?`
		args = append(args, string(f.Channel))
	}
	if f.ConsentStatus != "" {
		where += ` AND consent_status = ?`
		args = append(args, f.ConsentStatus)
	}
	if f.Search != "" {
		// Addresses are stored lower-cased; names compare lower-cased too.
		// SQLite's LOWER and LIKE fold only ASCII letters, so the name is
		// also matched as given: a substring written as stored always
		// matches ("Émile" in "Émile Zola").
		p := "%" + likeEscape(strings.ToLower(f.Search)) + "%"
		where += ` AND (address LIKE ? ESCAPE '\' OR LOWER(name) LIKE ? ESCAPE '\' OR name LIKE ? ESCAPE '\')`
		args = append(args, p, p, "%"+likeEscape(f.Search)+"%")
	}
	var total int
	if err := t.c.QueryRow(ctx, `SELECT COUNT(*) FROM subscribers`+where, args...).Scan(&total); err != nil {
		return nil, 0, err
	}
	subs, err := queryAll(ctx, t.c, scanSubscriber, `SELECT `+subscriberCols+` FROM subscribers`+where+
		` ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`, append(args, f.Limit, f.Offset)...)
	return subs, total, err
}

func (t newsletterTx) UpdateSubscriber(ctx context.Context, s *notify.Subscriber) error {
	attrs := s.Attributes
	if attrs == nil {
		attrs = map[string]string{}
	}
	return expectOne(t.c.Exec(ctx, `UPDATE subscribers SET name = ?, consent_status = ?, consent_source = ?, attributes = ?,
		consented_at = ?, unsubscribed_at = ?, updated_at = ? WHERE workspace_id = ? AND id = ?`,
		s.Name, s.ConsentStatus, s.ConsentSource, toJSON(attrs), msPtr(s.ConsentedAt), msPtr(s.UnsubscribedAt), ms(s.UpdatedAt),
		s.WorkspaceID, s.ID))
}

func (t newsletterTx) DeleteSubscriber(ctx context.Context, workspaceID, id string) error {
	return expectOne(t.c.Exec(ctx, `DELETE FROM subscribers WHERE workspace_id = ? AND id = ?`, workspaceID, id))
}

// UpsertSubscribers writes multi-row statements of subscriberChunk rows, so
// an import of 5,000 is ten round trips on either backend.
func (t newsletterTx) UpsertSubscribers(ctx context.Context, subs []*notify.Subscriber) error {
	for start := 0; start < len(subs); start += subscriberChunk {
		chunk := subs[start:min(start+subscriberChunk, len(subs))]
		args := make([]any, 0, len(chunk)*13)
		for _, s := range chunk {
			args = append(args, subscriberArgs(s)...)
		}
		_, err := t.c.Exec(ctx, `INSERT INTO subscribers (`+subscriberCols+`) VALUES `+subscriberValues+
			strings.Repeat(", "+subscriberValues, len(chunk)-1)+`
			ON CONFLICT (workspace_id, channel, address) DO UPDATE SET name = excluded.name,
			consent_status = excluded.consent_status, consent_source = excluded.consent_source,
			attributes = excluded.attributes, consented_at = excluded.consented_at,
			unsubscribed_at = excluded.unsubscribed_at, updated_at = excluded.updated_at`, args...)
		if err != nil {
			return err
		}
	}
	return nil
}

// LiftUnsubscribeSuppressions deletes in chunks, one statement per
// subscriberChunk addresses.
func (t newsletterTx) LiftUnsubscribeSuppressions(ctx context.Context, workspaceID string, addresses []string) error {
	for start := 0; start < len(addresses); start += subscriberChunk {
		chunk := addresses[start:min(start+subscriberChunk, len(addresses))]
		args := make([]any, 0, len(chunk)+2)
		args = append(args, workspaceID, notify.SuppressionUnsubscribe)
		for _, a := range chunk {
			args = append(args, a)
		}
		if _, err := t.c.Exec(ctx, `DELETE FROM suppressions WHERE workspace_id = ? AND reason = ? AND address IN (?`+
			strings.Repeat(", ?", len(chunk)-1)+`)`, args...); err != nil {
			return err
		}
	}
	return nil
}
