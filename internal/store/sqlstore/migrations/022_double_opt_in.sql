-- Double opt-in (issue 21, item 5). A workspace's newsletter settings: with
-- double_opt_in, new subscribers are pending until they confirm through a
-- mailed link. No row means the defaults (off), so SPEC behaviour is
-- unchanged until an admin turns it on.
CREATE TABLE newsletter_settings (
    workspace_id TEXT PRIMARY KEY REFERENCES workspaces(id) ON DELETE CASCADE,
    double_opt_in BOOLEAN NOT NULL,
    updated_at BIGINT NOT NULL
);
-- The last confirmation mail of a pending subscriber: when it was queued,
-- its request and how many were queued in all (the resend cooldown reads
-- it). The link itself is a signed token and is not stored here.
CREATE TABLE subscriber_confirmations (
    subscriber_id TEXT PRIMARY KEY REFERENCES subscribers(id) ON DELETE CASCADE,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    request_id TEXT NOT NULL,
    sent_at BIGINT NOT NULL,
    sends INTEGER NOT NULL
);
