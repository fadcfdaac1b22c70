-- Newsletter subscribers. The unsubscribe token (random, 43 base64url
-- characters) is kept in clear: every campaign mail must embed it, and it
-- authorizes nothing but unsubscribing that one address.
CREATE TABLE subscribers (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    channel TEXT NOT NULL,
    address TEXT NOT NULL,
    name TEXT NOT NULL DEFAULT '',
    consent_status TEXT NOT NULL,
    consent_source TEXT NOT NULL DEFAULT '',
    -- JSON object of string to string.
    attributes TEXT NOT NULL DEFAULT '{}',
    unsubscribe_token TEXT NOT NULL UNIQUE,
    consented_at BIGINT,
    unsubscribed_at BIGINT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    UNIQUE (workspace_id, channel, address)
);
CREATE INDEX subscribers_list ON subscribers (workspace_id, created_at DESC, id DESC);
