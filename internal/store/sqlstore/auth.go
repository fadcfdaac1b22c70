package sqlstore

import (
	"context"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
)

// CountLoginAttempt upserts the counter; the conflict update takes the
// row's lock, so counts of one key from many processes are serialized.
func (t accountTx) CountLoginAttempt(ctx context.Context, key string, now, expiresAt time.Time) (*notify.LoginCounter, error) {
	c := notify.LoginCounter{Key: key, ExpiresAt: expiresAt}
	var blocked int64
	err := t.c.QueryRow(ctx, `INSERT INTO login_throttle (key, attempts, blocked_until, expires_at) VALUES (?, 1, 0, ?)
		ON CONFLICT (key) DO UPDATE SET
			attempts = CASE WHEN login_throttle.expires_at <= ? THEN 1 ELSE login_throttle.attempts + 1 END,
			blocked_until = CASE WHEN login_throttle.expires_at <= ? THEN 0 ELSE login_throttle.blocked_until END,
			expires_at = excluded.expires_at
		RETURNING attempts, blocked_until`, key, ms(expiresAt), ms(now), ms(now)).Scan(&c.Attempts, &blocked)
	if err != nil {
		return nil, err
	}
	c.BlockedUntil = fromMs(blocked)
	return &c, nil
}

func (t accountTx) FindLoginCounter(ctx context.Context, key string, now time.Time) (*notify.LoginCounter, error) {
	c := notify.LoginCounter{Key: key}
	var blocked, expires int64
	err := t.c.QueryRow(ctx, `SELECT attempts, blocked_until, expires_at FROM login_throttle WHERE key = ? AND expires_at > ?`,
		key, ms(now)).Scan(&c.Attempts, &blocked, &expires)
	if err != nil {
		return nil, err
	}
	c.BlockedUntil, c.ExpiresAt = fromMs(blocked), fromMs(expires)
	return &c, nil
}

func (t accountTx) PutLoginCounter(ctx context.Context, c *notify.LoginCounter) error {
	_, err := t.c.Exec(ctx, `INSERT INTO login_throttle (key, attempts, blocked_until, expires_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (key) DO UPDATE SET attempts = excluded.attempts, blocked_until = excluded.blocked_until,
			expires_at = excluded.expires_at`, c.Key, c.Attempts, ms(c.BlockedUntil), ms(c.ExpiresAt))
	return err
}

func (t accountTx) DeleteLoginCounter(ctx context.Context, key string) error {
	_, err := t.c.Exec(ctx, `DELETE FROM login_throttle WHERE key = ?`, key)
	return err
}

func (t accountTx) DeleteExpiredLoginCounters(ctx context.Context, now time.Time) (int, error) {
	n, err := t.c.Exec(ctx, `DELETE FROM login_throttle WHERE expires_at <= ?`, ms(now))
	return int(n), err
}

func (t accountTx) DeleteSessionsOfUser(ctx context.Context, userID, exceptTokenHash string) (int, error) {
	n, err := t.c.Exec(ctx, `DELETE FROM sessions WHERE user_id = ? AND token_hash <> ?`, userID, exceptTokenHash)
	return int(n), err
}
