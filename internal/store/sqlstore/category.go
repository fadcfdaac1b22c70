package sqlstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/notifyd/notifyd/internal/notify"
)

const categoryCols = `id, workspace_id, key, name, description, required, default_channels, advertising, created_at, updated_at, frequency_cap`

func scanCategory(row Row) (*notify.Category, error) {
	var c notify.Category
	var chans string
	var cr, up int64
	var fc *string
	if err := row.Scan(&c.ID, &c.WorkspaceID, &c.Key, &c.Name, &c.Description, &c.Required, &chans, &c.Advertising,
		&cr, &up, &fc); err != nil {
		return nil, err
	}
	if fc != nil {
		c.FrequencyCap = &notify.FrequencyCap{}
		if err := fromJSON(*fc, c.FrequencyCap); err != nil {
			return nil, err
		}
	}
	if err := fromJSON(chans, &c.DefaultChannels); err != nil {
		return nil, err
	}
	if c.DefaultChannels == nil {
		c.DefaultChannels = []notify.Channel{}
	}
	c.CreatedAt, c.UpdatedAt = fromMs(cr), fromMs(up)
	return &c, nil
}

func defaultChannels(c *notify.Category) string {
	if c.DefaultChannels == nil {
		return "[]"
	}
	return toJSON(c.DefaultChannels)
}

// frequencyCap is the column of c's cap: NULL for none.
func frequencyCap(c *notify.Category) *string {
	return jsonOrNil(c.FrequencyCap, c.FrequencyCap == nil)
}

// CreateCategory uses DO NOTHING so a duplicate key answers ErrConflict
// without aborting the PostgreSQL transaction.
func (t categoryTx) CreateCategory(ctx context.Context, c *notify.Category) error {
	n, err := t.c.Exec(ctx, `INSERT INTO categories (`+categoryCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT DO NOTHING`, c.ID, c.WorkspaceID, c.Key, c.Name, c.Description, c.Required, defaultChannels(c),
		c.Advertising, ms(c.CreatedAt), ms(c.UpdatedAt), frequencyCap(c))
	if err != nil {
		return err
	}
	if n == 0 {
		return notify.ErrConflict
	}
	return t.bumpConfig(ctx, c.WorkspaceID)
}

func (t categoryTx) FindCategory(ctx context.Context, workspaceID, key string) (*notify.Category, error) {
	return scanCategory(t.c.QueryRow(ctx, `SELECT `+categoryCols+` FROM categories WHERE workspace_id = ? AND key = ?`,
		workspaceID, key))
}

func (t categoryTx) FindCategories(ctx context.Context, workspaceID string) ([]*notify.Category, error) {
	return queryAll(ctx, t.c, scanCategory, `SELECT `+categoryCols+` FROM categories WHERE workspace_id = ? ORDER BY key`,
		workspaceID)
}

func (t categoryTx) UpdateCategory(ctx context.Context, c *notify.Category) error {
	if err := expectOne(t.c.Exec(ctx, `UPDATE categories SET name = ?, description = ?, required = ?, default_channels = ?,
		advertising = ?, updated_at = ?, frequency_cap = ? WHERE workspace_id = ? AND key = ?`, c.Name, c.Description,
		c.Required, defaultChannels(c), c.Advertising, ms(c.UpdatedAt), frequencyCap(c), c.WorkspaceID, c.Key)); err != nil {
		return err
	}
	return t.bumpConfig(ctx, c.WorkspaceID)
}

// DeleteCategory: the category's preferences go by the cascade.
func (t categoryTx) DeleteCategory(ctx context.Context, workspaceID, key string) error {
	if err := expectOne(t.c.Exec(ctx, `DELETE FROM categories WHERE workspace_id = ? AND key = ?`, workspaceID, key)); err != nil {
		return err
	}
	return t.bumpConfig(ctx, workspaceID)
}

// ownerWhere selects the preferences of a recipient, or with recipientID
// "" the workspace default, in the form each index serves: the
// recipient's by recipient_id, the default's by the unique index's
// COALESCE expression.
func ownerWhere(alias, workspaceID, recipientID string) (string, []any) {
	if recipientID == "" {
		return alias + `workspace_id = ? AND COALESCE(` + alias + `recipient_id, '') = ''`, []any{workspaceID}
	}
	return alias + `recipient_id = ? AND ` + alias + `workspace_id = ?`, []any{recipientID, workspaceID}
}

func emptyPreferences() *notify.Preferences {
	return &notify.Preferences{Channels: map[notify.Channel]bool{}, Categories: map[string]map[notify.Channel]bool{}}
}

// add puts one stored choice into p: key nil is the channel's switch.
func addPreference(p *notify.Preferences, key *string, ch string, allowed bool) {
	if key == nil {
		p.Channels[notify.Channel(ch)] = allowed
		return
	}
	m := p.Categories[*key]
	if m == nil {
		m = map[notify.Channel]bool{}
		p.Categories[*key] = m
	}
	m[notify.Channel(ch)] = allowed
}

func (t preferenceTx) FindPreferences(ctx context.Context, workspaceID, recipientID string) (*notify.Preferences, error) {
	where, args := ownerWhere("p.", workspaceID, recipientID)
	rows, err := t.c.Query(ctx, `SELECT c.key, p.channel, p.allowed FROM preferences p
		LEFT JOIN categories c ON c.id = p.category_id WHERE `+where, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	p := emptyPreferences()
	for rows.Next() {
		var key *string
		var ch string
		var allowed bool
		if err := rows.Scan(&key, &ch, &allowed); err != nil {
			return nil, err
		}
		addPreference(p, key, ch, allowed)
	}
	return p, rows.Err()
}

// preferenceChunk bounds the rows of one INSERT (5 parameters a row).
const preferenceChunk = 1000

func (t preferenceTx) ReplacePreferences(ctx context.Context, workspaceID, recipientID string, p *notify.Preferences) error {
	where, args := ownerWhere("", workspaceID, recipientID)
	if _, err := t.c.Exec(ctx, `DELETE FROM preferences WHERE `+where, args...); err != nil {
		return err
	}
	ids := map[string]string{}
	if len(p.Categories) > 0 {
		// On PostgreSQL the categories are read under a shared lock that a
		// DELETE waits for: one removed between this read and the insert
		// would fail the insert on the foreign key. SQLite's one writer
		// cannot interleave them.
		q := `SELECT key, id FROM categories WHERE workspace_id = ?`
		if locksRows(t.c) {
			q += ` FOR KEY SHARE`
		}
		pairs, err := queryAll(ctx, t.c, func(r Row) ([2]string, error) {
			var kv [2]string
			return kv, r.Scan(&kv[0], &kv[1])
		}, q, workspaceID)
		if err != nil {
			return err
		}
		for _, kv := range pairs {
			ids[kv[0]] = kv[1]
		}
	}
	var rows [][]any
	rid := nullable(recipientID)
	for ch, on := range p.Channels {
		rows = append(rows, []any{workspaceID, rid, nil, string(ch), on})
	}
	for key, m := range p.Categories {
		id, ok := ids[key]
		if !ok {
			return fmt.Errorf("category %q: %w", key, notify.ErrNotFound)
		}
		for ch, on := range m {
			rows = append(rows, []any{workspaceID, rid, id, string(ch), on})
		}
	}
	for start := 0; start < len(rows); start += preferenceChunk {
		chunk := rows[start:min(start+preferenceChunk, len(rows))]
		vals := make([]any, 0, len(chunk)*5)
		for _, r := range chunk {
			vals = append(vals, r...)
		}
		if _, err := t.c.Exec(ctx, `INSERT INTO preferences (workspace_id, recipient_id, category_id, channel, allowed) VALUES `+
			strings.TrimSuffix(strings.Repeat(`(?, ?, ?, ?, ?), `, len(chunk)), ", "), vals...); err != nil {
			return err
		}
	}
	if recipientID == "" {
		return t.bumpConfig(ctx, workspaceID)
	}
	return t.bumpRecipients(ctx, workspaceID)
}

// FindSendPreferencesMany answers qs with the profiles named, each with
// its own choices on those channels, from the profile cache at the
// workspace's versions read now (one small statement; the profiles the
// cache lacks in one more), and the categories and the default's choices
// from the configuration cache at that version.
func (t preferenceTx) FindSendPreferencesMany(ctx context.Context, workspaceID string, qs []notify.PreferenceQuery) ([]*notify.SendPreferences, error) {
	extArgs, chanArgs := distinct(qs, func(q notify.PreferenceQuery) string { return q.RecipientExternalID }),
		distinct(qs, func(q notify.PreferenceQuery) string { return string(q.Channel) })
	chans := make([]string, len(chanArgs))
	for i, c := range chanArgs {
		chans[i] = c.(string)
	}
	exts := make([]string, len(extArgs))
	for i, e := range extArgs {
		exts[i] = e.(string)
	}
	if len(chans) == 0 {
		exts = nil // no channel: no choice of a profile's to read
	}
	var ps map[string]*cachedProfile
	var v wsVersions
	var err error
	if len(exts) == 1 {
		// One profile: one statement, hit or miss.
		var p *cachedProfile
		if p, v, err = t.cachedProfile(ctx, workspaceID, exts[0]); p != nil {
			ps = map[string]*cachedProfile{exts[0]: p}
		}
	} else {
		ps, v, err = t.cachedProfiles(ctx, workspaceID, exts)
	}
	if err != nil {
		return nil, err
	}
	cfg, err := t.sendConfig(ctx, workspaceID, v.config)
	if err != nil {
		return nil, err
	}
	def := pick(cfg.defaults, chans, "", false)
	byOwner := map[string]*notify.Preferences{}
	out := make([]*notify.SendPreferences, len(qs))
	for i, q := range qs {
		sp := &notify.SendPreferences{Category: cfg.categories[q.CategoryKey], Default: def}
		if p := ps[q.RecipientExternalID]; p != nil {
			id := p.r.ID
			if byOwner[id] == nil {
				byOwner[id] = pick(p.own, chans, "", false)
			}
			sp.Recipient, sp.RecipientRow = byOwner[id], id
		}
		out[i] = sp
	}
	return out, nil
}

// distinct lists the non-empty values of f over qs once each.
func distinct(qs []notify.PreferenceQuery, f func(notify.PreferenceQuery) string) []any {
	seen := map[string]bool{}
	var out []any
	for _, q := range qs {
		if v := f(q); v != "" && !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

func placeholders(n int) string { return "?" + strings.Repeat(", ?", n-1) }
