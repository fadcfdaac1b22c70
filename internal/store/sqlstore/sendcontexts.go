package sqlstore

import (
	"context"
	"slices"

	"github.com/notifyd/notifyd/internal/notify"
)

// FindSendContexts reads the contexts of many sends by recipient id in
// one statement (a batch of workflow send steps, up to 500): every
// profile named with its own choices on all the queries' channels, and
// the configuration version, then each query's context from the
// configuration cache as FindSendContext does. A query without a
// profile, or that needs consents, is read alone by FindSendContext.
func (t preferenceTx) FindSendContexts(ctx context.Context, ws string, qs []notify.SendContextQuery) ([]*notify.SendContext, error) {
	out := make([]*notify.SendContext, len(qs))
	var exts, chans []string
	seen := map[string]bool{}
	for _, q := range qs {
		if q.RecipientExternalID == "" || q.Consents {
			continue
		}
		if !seen[q.RecipientExternalID] {
			seen[q.RecipientExternalID] = true
			exts = append(exts, q.RecipientExternalID)
		}
		for _, ch := range q.Channels {
			if !slices.Contains(chans, string(ch)) {
				chans = append(chans, string(ch))
			}
		}
	}
	var version int64
	versions := map[string]int64{} // each profile's statement's
	profiles := map[string]*notify.Recipient{}
	own := map[string][]choice{}
	for start := 0; start < len(exts); start += 500 {
		part := exts[start:min(start+500, len(exts))]
		args := []any{ws}
		for _, ch := range chans {
			args = append(args, ch)
		}
		args = append(args, ws)
		for _, e := range part {
			args = append(args, e)
		}
		rows, err := t.c.Query(ctx, `SELECT `+prefixCols("r.", profileCols)+`, `+configVersionOf+`, c.key, p.channel, p.allowed
			FROM recipients r LEFT JOIN preferences p ON p.recipient_id = r.id AND p.channel IN (`+placeholders(len(chans))+`)
			LEFT JOIN categories c ON c.id = p.category_id WHERE r.workspace_id = ? AND r.external_id IN (`+placeholders(len(part))+`)`,
			uncached(len(part), args)...)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var ch struct {
				key, channel *string
				allowed      *bool
			}
			r, err := scanRecipient(extraRow{rows, []any{&version, &ch.key, &ch.channel, &ch.allowed}})
			if err != nil {
				rows.Close()
				return nil, err
			}
			if profiles[r.ExternalID] == nil {
				profiles[r.ExternalID], versions[r.ExternalID] = r, version
			}
			if ch.channel != nil {
				own[r.ExternalID] = append(own[r.ExternalID], choice{key: ch.key, channel: *ch.channel, allowed: *ch.allowed})
			}
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, err
		}
	}
	for i, q := range qs {
		p := profiles[q.RecipientExternalID]
		if p == nil || q.Consents {
			sc, err := t.FindSendContext(ctx, ws, q)
			if err != nil {
				return nil, err
			}
			out[i] = sc
			continue
		}
		qc := make([]string, len(q.Channels))
		for j, ch := range q.Channels {
			qc[j] = string(ch)
		}
		sc := &notify.SendContext{Recipient: p, Preferences: &notify.SendPreferences{}}
		if err := t.fillSendContext(ctx, ws, sc, versions[q.RecipientExternalID], own[q.RecipientExternalID], qc, q.CategoryKey); err != nil {
			return nil, err
		}
		out[i] = sc
	}
	return out, nil
}
