-- Categories and preferences (issue 32, item 3). A category is keyed by
-- the workspace and its key; id is notifyd's key of the row, which
-- preferences refer to. default_channels is a JSON array of channels
-- (empty: every channel).
CREATE TABLE categories (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    key TEXT NOT NULL,
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    required BOOLEAN NOT NULL,
    default_channels TEXT NOT NULL DEFAULT '[]',
    advertising BOOLEAN NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    UNIQUE (workspace_id, key)
);

-- One row per choice: a recipient's (recipient_id) or the workspace
-- default's (recipient_id NULL), for a category on a channel or, with
-- category_id NULL, the channel's switch. Both references cascade, so a
-- profile's erasure and a category's removal take their choices along.
CREATE TABLE preferences (
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    recipient_id TEXT REFERENCES recipients(id) ON DELETE CASCADE,
    category_id TEXT REFERENCES categories(id) ON DELETE CASCADE,
    channel TEXT NOT NULL,
    allowed BOOLEAN NOT NULL
);
-- One choice per place; the NULLs (default, switch) made comparable.
CREATE UNIQUE INDEX preferences_one ON preferences
    (workspace_id, COALESCE(recipient_id, ''), COALESCE(category_id, ''), channel);
-- A recipient's choices (and the cascade of its erasure).
CREATE INDEX preferences_recipient ON preferences (recipient_id, channel);
-- The cascade of a category's removal.
CREATE INDEX preferences_category ON preferences (category_id);
