-- Recipient profiles (issue 32, item 1): a workspace's profile of one
-- person, keyed by the application's own id (external_id). id is
-- notifyd's key of the row, for the tables of preferences and consents
-- that will refer to it (and go with it on erasure). An empty string is
-- an absent field; push_tokens is a JSON array, chat_targets and
-- attributes JSON objects of strings.
CREATE TABLE recipients (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    external_id TEXT NOT NULL,
    name TEXT NOT NULL DEFAULT '',
    phone TEXT NOT NULL DEFAULT '',
    email TEXT NOT NULL DEFAULT '',
    push_tokens TEXT NOT NULL DEFAULT '[]',
    chat_targets TEXT NOT NULL DEFAULT '{}',
    time_zone TEXT NOT NULL DEFAULT '',
    locale TEXT NOT NULL DEFAULT '',
    attributes TEXT NOT NULL DEFAULT '{}',
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    UNIQUE (workspace_id, external_id)
);
-- The list, newest first, and its cursor.
CREATE INDEX recipients_list ON recipients (workspace_id, created_at DESC, id DESC);
