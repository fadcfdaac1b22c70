package sqlstore

import (
	"context"
	"fmt"
	"sort"

	"github.com/notifyd/notifyd/internal/notify"
)

// sealedColumns are the columns of notify.SealedValue kinds. A sealed
// text is "v1.<8-character key id>.<data>": the key id is characters 4
// to 11, the same substr() on both backends.
var sealedColumns = []struct{ kind, table, column string }{
	{notify.SealedProviderConfig, "provider_accounts", "config_enc"},
	{notify.SealedAPIKeyHMAC, "api_keys", "hmac_secret_enc"},
	{notify.SealedWebhookSecret, "webhooks", "secret_enc"},
	{notify.SealedWebhookPreviousSecret, "webhooks", "previous_secret_enc"},
	{notify.SealedInboxSecret, "inbox_settings", "secret_enc"},
}

func (t providerTx) SealedKeyIDs(ctx context.Context) ([]string, error) {
	seen := map[string]bool{}
	for _, c := range sealedColumns {
		ids, err := queryAll(ctx, t.c, scanString, `SELECT DISTINCT substr(`+c.column+`, 4, 8) FROM `+c.table+`
			WHERE `+c.column+` LIKE 'v1.%'`)
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			seen[id] = true
		}
	}
	out := make([]string, 0, len(seen))
	for id := range seen {
		out = append(out, id)
	}
	sort.Strings(out)
	return out, nil
}

func scanString(r Row) (string, error) {
	var s string
	err := r.Scan(&s)
	return s, err
}

// FindSealedValues, like SealedKeyIDs, sees only values in the sealed
// format: anything else fails where it is read, as before.
func (t providerTx) FindSealedValues(ctx context.Context, keep string) ([]notify.SealedValue, error) {
	var out []notify.SealedValue
	for _, c := range sealedColumns {
		vs, err := queryAll(ctx, t.c, func(r Row) (notify.SealedValue, error) {
			v := notify.SealedValue{Kind: c.kind}
			err := r.Scan(&v.ID, &v.Value)
			return v, err
		}, `SELECT id, `+c.column+` FROM `+c.table+` WHERE `+c.column+` LIKE 'v1.%'
			AND substr(`+c.column+`, 4, 8) <> ? ORDER BY id`, keep)
		if err != nil {
			return nil, err
		}
		out = append(out, vs...)
	}
	return out, nil
}

func (t providerTx) UpdateSealedValue(ctx context.Context, v notify.SealedValue, sealed string) error {
	for _, c := range sealedColumns {
		if c.kind == v.Kind {
			return expectOne(t.c.Exec(ctx, `UPDATE `+c.table+` SET `+c.column+` = ? WHERE id = ? AND `+c.column+` = ?`,
				sealed, v.ID, v.Value))
		}
	}
	return fmt.Errorf("sqlstore: unknown sealed value kind %q", v.Kind)
}
