-- Delivery receipts (issue 35): the vendor's report about one accepted
-- attempt, beside SPEC's request status. attempt_id is the attempt's id
-- (no reference: attempts are bulk-written in the same transaction and
-- pruned by retention with their requests, receipts with them).
-- status: pending, delivered, undelivered, unknown. reported_at is NULL
-- while pending; deadline ends the wait (unknown after it). fell_back
-- marks an undelivered report that moved the request along its channel
-- fallback, so it happens once.
CREATE TABLE delivery_receipts (
    attempt_id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    request_id TEXT NOT NULL,
    provider_account_id TEXT NOT NULL,
    provider_kind TEXT NOT NULL,
    provider_message_id TEXT NOT NULL,
    recipient TEXT NOT NULL DEFAULT '',
    channel TEXT NOT NULL,
    fallback_step INTEGER NOT NULL DEFAULT 0,
    status TEXT NOT NULL,
    code TEXT NOT NULL DEFAULT '',
    text TEXT NOT NULL DEFAULT '',
    reported_at BIGINT,
    polls INTEGER NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    deadline BIGINT NOT NULL,
    fell_back BOOLEAN NOT NULL DEFAULT FALSE
);
-- A request's receipts (lookups, retention's purge by request); a
-- callback's message id.
CREATE INDEX delivery_receipts_request ON delivery_receipts (request_id);
CREATE INDEX delivery_receipts_message ON delivery_receipts (provider_kind, provider_message_id);

-- A pushed report (an e-mail delivery callback) that arrived before the
-- record of its send committed: kept until the receipt is created, which
-- applies it. One per message and status, so a repeated callback is kept
-- once.
CREATE TABLE early_delivery_reports (
    provider_kind TEXT NOT NULL,
    provider_message_id TEXT NOT NULL,
    status TEXT NOT NULL,
    code TEXT NOT NULL DEFAULT '',
    text TEXT NOT NULL DEFAULT '',
    reported_at BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (provider_kind, provider_message_id, status)
);
-- Reports about messages that were never ours are swept after a week.
CREATE INDEX early_delivery_reports_created ON early_delivery_reports (created_at);
