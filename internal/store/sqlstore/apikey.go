package sqlstore

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
)

const apiKeyCols = `id, workspace_id, key_id, name, scopes, allowed_template_codes, status, secret_hash, hmac_secret_enc, created_at, updated_at, last_used_at, test`

func (t accountTx) CreateAPIKey(ctx context.Context, k *notify.APIKey) error {
	_, err := t.c.Exec(ctx, `INSERT INTO api_keys (`+apiKeyCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		k.ID, k.WorkspaceID, k.KeyID, k.Name, toJSON(k.Scopes), templatesJSON(k.AllowedTemplateCodes), k.Status,
		k.SecretHash, k.HMACSecretEnc, ms(k.CreatedAt), ms(k.UpdatedAt), msPtr(k.LastUsedAt), k.Test)
	return err
}

func templatesJSON(codes []string) *string {
	if codes == nil {
		return nil
	}
	s := toJSON(codes)
	return &s
}

func scanAPIKey(r Row) (*notify.APIKey, error) {
	var k notify.APIKey
	var scopes string
	var tpl *string
	var c, u int64
	var used *int64
	if err := r.Scan(&k.ID, &k.WorkspaceID, &k.KeyID, &k.Name, &scopes, &tpl, &k.Status, &k.SecretHash,
		&k.HMACSecretEnc, &c, &u, &used, &k.Test); err != nil {
		return nil, err
	}
	if err := fromJSON(scopes, &k.Scopes); err != nil {
		return nil, err
	}
	if tpl != nil {
		k.AllowedTemplateCodes = []string{}
		if err := fromJSON(*tpl, &k.AllowedTemplateCodes); err != nil {
			return nil, err
		}
	}
	k.CreatedAt, k.UpdatedAt, k.LastUsedAt = fromMs(c), fromMs(u), fromMsPtr(used)
	return &k, nil
}

func (t accountTx) FindAPIKey(ctx context.Context, workspaceID, id string) (*notify.APIKey, error) {
	return scanAPIKey(t.c.QueryRow(ctx, `SELECT `+apiKeyCols+` FROM api_keys WHERE workspace_id = ? AND id = ?`, workspaceID, id))
}

// FindAPIKeyByKeyID looks a key up by its public key id, before the
// workspace is known: the key itself names the workspace.
func (t accountTx) FindAPIKeyByKeyID(ctx context.Context, keyID string) (*notify.APIKey, error) {
	return scanAPIKey(t.c.QueryRow(ctx, `SELECT `+apiKeyCols+` FROM api_keys WHERE key_id = ?`, keyID))
}

func (t accountTx) FindAPIKeys(ctx context.Context, workspaceID string) ([]*notify.APIKey, error) {
	return queryAll(ctx, t.c, scanAPIKey, `SELECT `+apiKeyCols+` FROM api_keys WHERE workspace_id = ? ORDER BY created_at, id`, workspaceID)
}

// UpdateAPIKey saves the mutable fields of k.
func (t accountTx) UpdateAPIKey(ctx context.Context, k *notify.APIKey) error {
	return expectOne(t.c.Exec(ctx, `UPDATE api_keys SET name = ?, scopes = ?, allowed_template_codes = ?, status = ?,
		secret_hash = ?, hmac_secret_enc = ?, updated_at = ? WHERE workspace_id = ? AND id = ?`,
		k.Name, toJSON(k.Scopes), templatesJSON(k.AllowedTemplateCodes), k.Status, k.SecretHash, k.HMACSecretEnc,
		ms(k.UpdatedAt), k.WorkspaceID, k.ID))
}

func (t accountTx) TouchAPIKey(ctx context.Context, id string, at time.Time) error {
	_, err := t.c.Exec(ctx, `UPDATE api_keys SET last_used_at = ? WHERE id = ?`, ms(at), id)
	return err
}

// UseNonce inserts the nonce; an unexpired duplicate is ErrConflict. An
// expired duplicate is replaced, so cleanup lag never blocks a client.
func (t accountTx) UseNonce(ctx context.Context, keyID, nonce string, now, expiresAt time.Time) error {
	n, err := t.c.Exec(ctx, `INSERT INTO api_nonces (key_id, nonce, expires_at) VALUES (?, ?, ?)
		ON CONFLICT (key_id, nonce) DO UPDATE SET expires_at = excluded.expires_at
		WHERE api_nonces.expires_at <= ?`, keyID, nonce, ms(expiresAt), ms(now))
	if err != nil {
		return err
	}
	if n == 0 {
		return notify.ErrConflict
	}
	return nil
}

// UseNonces inserts the nonces in one statement; RETURNING names the ones
// stored (new, or replacing an expired duplicate), so the others are
// replays. A nonce repeated in uses goes in once, at its first place: one
// statement may not upsert a row twice (PostgreSQL refuses, SQLite would
// report the last place new), and the repeats are replays.
func (t accountTx) UseNonces(ctx context.Context, uses []notify.NonceUse, now time.Time) ([]bool, error) {
	fresh := make([]bool, len(uses))
	idx := make(map[[2]string]int, len(uses))
	distinct := uses // shared until a first repeat (the send path has none)
	for i, u := range uses {
		k := [2]string{u.KeyID, u.Nonce}
		if _, dup := idx[k]; dup {
			if len(distinct) == len(uses) {
				distinct = slices.Clone(uses[:i])
			}
			continue
		}
		idx[k] = i
		if len(distinct) < len(uses) {
			distinct = append(distinct, u)
		}
	}
	start := 0
	for _, size := range t.chunks(len(distinct), updateChunk) {
		part := distinct[start : start+size]
		start += size
		args := make([]any, 0, len(part)*3+1)
		for _, u := range part {
			args = append(args, u.KeyID, u.Nonce, ms(u.ExpiresAt))
		}
		args = append(args, ms(now))
		rows, err := t.c.Query(ctx, `INSERT INTO api_nonces (key_id, nonce, expires_at) VALUES (?, ?, ?)`+
			strings.Repeat(", (?, ?, ?)", len(part)-1)+` ON CONFLICT (key_id, nonce) DO UPDATE SET expires_at = excluded.expires_at
			WHERE api_nonces.expires_at <= ? RETURNING key_id, nonce`, args...)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var k, n string
			if err := rows.Scan(&k, &n); err != nil {
				rows.Close()
				return nil, err
			}
			fresh[idx[[2]string{k, n}]] = true
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return fresh, nil
}

func (t accountTx) DeleteExpiredNonces(ctx context.Context, now time.Time) (int, error) {
	n, err := t.c.Exec(ctx, `DELETE FROM api_nonces WHERE expires_at <= ?`, ms(now))
	return int(n), err
}
