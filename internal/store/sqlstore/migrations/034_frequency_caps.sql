-- Frequency caps (issue 32, item 6). A category's cap is a JSON object
-- {"max", "windowSeconds", "mode"}; NULL: no cap.
ALTER TABLE categories ADD COLUMN frequency_cap TEXT;

-- The sliding log of one recipient profile's counted sends of one
-- category: sent_at is a JSON array of the times (ms) counted within the
-- window, oldest first, pruned on every count; last_at is the newest, by
-- which rows of pairs no longer sent to are swept. One row per pair, locked
-- by the count (an upsert) until the claim's transaction ends, so two
-- processes counting at once on PostgreSQL wait for each other. Both
-- references cascade: the log goes with the profile or the category.
CREATE TABLE frequency_cap_log (
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    recipient_id TEXT NOT NULL REFERENCES recipients(id) ON DELETE CASCADE,
    category_id TEXT NOT NULL REFERENCES categories(id) ON DELETE CASCADE,
    sent_at TEXT NOT NULL DEFAULT '[]',
    last_at BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (workspace_id, recipient_id, category_id)
);
-- The cascades of an erasure and of a category's removal.
CREATE INDEX frequency_cap_log_recipient ON frequency_cap_log (recipient_id);
CREATE INDEX frequency_cap_log_category ON frequency_cap_log (category_id);
-- The sweep of stale rows.
CREATE INDEX frequency_cap_log_last ON frequency_cap_log (last_at);
