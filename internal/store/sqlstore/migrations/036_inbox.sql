-- The in-app inbox (issue 33). An inapp send's action URL and data, as
-- a JSON object {"actionUrl", "data"}; NULL: none.
ALTER TABLE notification_requests ADD COLUMN inapp TEXT;

-- One message of a recipient profile's inbox. request_id is the request
-- that delivered it (no reference: the message outlives the request's
-- retention); one message per request, so a delivery recorded twice
-- stores once. data is a JSON object, NULL for none. The read, seen and
-- archived times are NULL until the recipient does so.
CREATE TABLE inbox_messages (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    recipient_id TEXT NOT NULL REFERENCES recipients(id) ON DELETE CASCADE,
    request_id TEXT NOT NULL,
    category TEXT NOT NULL DEFAULT '',
    title TEXT NOT NULL DEFAULT '',
    body TEXT NOT NULL DEFAULT '',
    action_url TEXT NOT NULL DEFAULT '',
    data TEXT,
    created_at BIGINT NOT NULL,
    read_at BIGINT,
    seen_at BIGINT,
    archived_at BIGINT,
    UNIQUE (workspace_id, request_id)
);
-- The list, newest first, and its cursor; the counts.
CREATE INDEX inbox_messages_list ON inbox_messages (recipient_id, created_at DESC, id DESC);

-- The head of each profile's event log: the last sequence number given.
-- Appending takes the row's lock (an upsert) until the transaction ends,
-- so the events of one profile commit in the order of their numbers and
-- a reader of the log after n never skips one committed later.
CREATE TABLE inbox_heads (
    recipient_id TEXT PRIMARY KEY REFERENCES recipients(id) ON DELETE CASCADE,
    workspace_id TEXT NOT NULL,
    seq BIGINT NOT NULL
);

-- The event log of each profile's inbox: what its streams send, and
-- what a reconnecting stream resumes from. message_id is '' for an
-- event of all messages.
CREATE TABLE inbox_events (
    recipient_id TEXT NOT NULL REFERENCES recipients(id) ON DELETE CASCADE,
    seq BIGINT NOT NULL,
    workspace_id TEXT NOT NULL,
    type TEXT NOT NULL,
    message_id TEXT NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL,
    PRIMARY KEY (recipient_id, seq)
);
-- The sweep of old events.
CREATE INDEX inbox_events_created ON inbox_events (created_at);
