-- Inbound hooks (issue 36, item 3): a workspace's receiving URLs for the
-- payloads other tools send (Alertmanager, Grafana, ntfy, Slack, Apprise).
-- The URL's token is kept only as its SHA-256 hash, unique across
-- workspaces since the token alone finds the hook. addresses and
-- recipient_ids are JSON arrays; template_code and category are '' when
-- the hook names none.
CREATE TABLE inbound_hooks (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    format TEXT NOT NULL,
    channel TEXT NOT NULL,
    addresses TEXT NOT NULL DEFAULT '[]',
    recipient_ids TEXT NOT NULL DEFAULT '[]',
    template_code TEXT NOT NULL DEFAULT '',
    category TEXT NOT NULL DEFAULT '',
    rate_limit INTEGER NOT NULL,
    enabled BOOLEAN NOT NULL,
    token_hash TEXT NOT NULL,
    token_rotated_at BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    UNIQUE (workspace_id, name)
);
CREATE UNIQUE INDEX inbound_hooks_token ON inbound_hooks (token_hash);
