-- A workspace's inbox settings (issue 33, item 2): the secret that signs
-- its recipient tokens, sealed with the master key (kind inbox_secret,
-- bound to the row; NULL until the first token or rotation), and the
-- browser origins allowed to call /v1/inbox (a JSON array). id is the
-- workspace's id: one row per workspace.
CREATE TABLE inbox_settings (
    id TEXT PRIMARY KEY REFERENCES workspaces(id) ON DELETE CASCADE,
    secret_enc TEXT,
    allowed_origins TEXT NOT NULL DEFAULT '[]',
    updated_at BIGINT NOT NULL
);
