package sqlstore

import (
	"context"
	"sync/atomic"

	"github.com/notifyd/notifyd/internal/notify"
)

// The acceptance read of a send by recipient id or category is one
// statement (and the consents, pipelined with it, when a phone channel
// may carry advertising): the profile with its own choices on the
// channels asked and its workspace's configuration version. The
// category, the default's choices and the windows come from the
// configuration cache at that version (configcache.go).
const profileRowOf = `(SELECT id FROM recipients WHERE workspace_id = ? AND external_id = ?)`

func (t preferenceTx) FindSendContext(ctx context.Context, ws string, q notify.SendContextQuery) (*notify.SendContext, error) {
	out := &notify.SendContext{Preferences: &notify.SendPreferences{}}
	ext, key := q.RecipientExternalID, q.CategoryKey
	chans := make([]string, len(q.Channels))
	for i, ch := range q.Channels {
		chans[i] = string(ch)
	}
	var version int64
	var own []choice
	var reads []Read
	if ext != "" && !q.Consents {
		// The profile from the cache, at the versions read now.
		p, v, err := t.cachedProfile(ctx, ws, ext)
		if err != nil {
			return nil, err
		}
		version = v.config
		if p != nil {
			r := *p.r
			out.Recipient, own = &r, p.own
		}
	} else if ext != "" {
		// One row per choice of the profile on the channels (one row with
		// NULLs when it has none); the profile's columns repeat.
		args := []any{ws}
		for _, ch := range chans {
			args = append(args, ch)
		}
		reads = append(reads, Read{SQL: sendContextSQL(len(chans)),
			Args: append(args, ws, ext), Scan: func(rows Rows) error {
				for rows.Next() {
					var ch struct {
						key, channel *string
						allowed      *bool
					}
					row := extraRow{rows, []any{&version, &ch.key, &ch.channel, &ch.allowed}}
					r, err := scanRecipient(row)
					if err != nil {
						return err
					}
					if out.Recipient == nil {
						out.Recipient = r
					}
					if ch.channel != nil {
						own = append(own, choice{key: ch.key, channel: *ch.channel, allowed: *ch.allowed})
					}
				}
				return nil
			}})
		if q.Consents {
			reads = append(reads, Read{SQL: `SELECT ` + consentCols + ` FROM recipient_consents WHERE workspace_id = ? AND recipient_id = ` +
				profileRowOf + ` ORDER BY kind`, Args: []any{ws, ws, ext}, Scan: collect(&out.Consents, scanConsent)})
		}
		if err := pipeline(ctx, t.c, reads); err != nil {
			return nil, err
		}
	}
	if out.Recipient == nil && (ext == "" || q.Consents) {
		// No profile named, or none of that name: the version alone.
		err := t.c.QueryRow(ctx, `SELECT config_version FROM workspaces WHERE id = ?`, ws).Scan(&version)
		if err != nil && !notify.IsNotFound(err) {
			return nil, err
		}
	}
	if err := t.fillSendContext(ctx, ws, out, version, own, chans, key); err != nil {
		return nil, err
	}
	return out, nil
}

// fillSendContext completes out, whose profile (if any) and its own
// choices own were read at the configuration's version, from the
// configuration cache: the category, the default's choices, the windows.
func (t preferenceTx) fillSendContext(ctx context.Context, ws string, out *notify.SendContext, version int64, own []choice,
	chans []string, key string) error {
	cfg, err := t.sendConfig(ctx, ws, version)
	if err != nil {
		return err
	}
	out.Category = cfg.categories[key]
	out.Preferences.Category = out.Category
	out.Preferences.Default = pick(cfg.defaults, chans, key, true)
	if out.Recipient != nil {
		out.Preferences.Recipient, out.Preferences.RecipientRow = pick(own, chans, key, true), out.Recipient.ID
	}
	catID := ""
	if out.Category != nil {
		catID = out.Category.ID
	}
	out.Windows = cfg.windowsOf(catID)
	return nil
}

// sendContextSQL is the profile read of FindSendContext for n channels,
// built once per n (a send names one channel and at most a few fallback
// steps).
func sendContextSQL(n int) string {
	if n < len(sendContextSQLs) {
		if q := sendContextSQLs[n].Load(); q != nil {
			return *q
		}
	}
	q := `SELECT ` + prefixCols("r.", profileCols) + `, ` + configVersionOf + `, c.key, p.channel, p.allowed
			FROM recipients r LEFT JOIN preferences p ON p.recipient_id = r.id AND p.channel IN (` + placeholders(n) + `)
			LEFT JOIN categories c ON c.id = p.category_id WHERE r.workspace_id = ? AND r.external_id = ?`
	if n < len(sendContextSQLs) {
		sendContextSQLs[n].Store(&q)
	}
	return q
}

var sendContextSQLs [8]atomic.Pointer[string]

// extraRow scans a row holding a type's columns and then extra ones: the
// type's scan function fills its own, extra gets the rest.
type extraRow struct {
	Row
	extra []any
}

func (r extraRow) Scan(dest ...any) error { return r.Row.Scan(append(dest, r.extra...)...) }
