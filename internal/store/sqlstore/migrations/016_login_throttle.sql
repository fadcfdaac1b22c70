-- Login throttle counters, shared by every process (docs/DECISIONS.md,
-- "Login throttle"). key is the SHA-256 hex of a client, account,
-- account-and-client or known-client key, so no email or address is kept
-- in the clear. expires_at ends a counter after a quiet hour (a known
-- client after 30 days); the cleanup deletes ended rows.
CREATE TABLE login_throttle (
    key TEXT PRIMARY KEY,
    attempts INTEGER NOT NULL,
    blocked_until BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE INDEX login_throttle_expires ON login_throttle (expires_at);
-- "Log out everywhere" and a password change end a user's sessions.
CREATE INDEX sessions_user ON sessions (user_id);
