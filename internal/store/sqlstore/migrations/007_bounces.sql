-- Bounce and complaint intake. callback_secrets holds each provider
-- account's callback secret as SHA-256 hashes: the current one and, during
-- a rotation, the previous one (both accepted until finalize).
-- delivery_feedback keeps every bounce and complaint a vendor reported,
-- tied to the attempt whose provider message id it names (when one matches).
CREATE TABLE callback_secrets (
    provider_account_id TEXT PRIMARY KEY REFERENCES provider_accounts(id) ON DELETE CASCADE,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    current_hash TEXT NOT NULL,
    previous_hash TEXT,
    rotated_at BIGINT NOT NULL
);
CREATE TABLE delivery_feedback (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    provider_account_id TEXT NOT NULL,
    provider_message_id TEXT NOT NULL,
    request_id TEXT,
    attempt_id TEXT,
    recipient_address TEXT NOT NULL,
    type TEXT NOT NULL,
    bounce_type TEXT,
    detail TEXT,
    suppressed BOOLEAN NOT NULL,
    vendor_event_id TEXT NOT NULL,
    occurred_at BIGINT NOT NULL,
    received_at BIGINT NOT NULL,
    UNIQUE (provider_account_id, vendor_event_id)
);
CREATE INDEX delivery_feedback_attempt ON delivery_feedback(attempt_id);
CREATE INDEX suppressions_ws_time ON suppressions(workspace_id, created_at DESC, address DESC);
-- Feedback names the message by the vendor's id; without this index the
-- match would scan the workspace's attempts.
CREATE INDEX attempts_provider_message ON attempts(provider_account_id, provider_message_id) WHERE provider_message_id IS NOT NULL;
