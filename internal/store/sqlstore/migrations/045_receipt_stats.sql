-- Delivery rates (issue 35, item 5): /v1/metrics and the console overview
-- count a workspace's receipts by the time of the send (created_at), so
-- the range is read from this index, not from the whole table.
CREATE INDEX delivery_receipts_workspace_created ON delivery_receipts (workspace_id, created_at);
-- Receipts purged with their requests (retention) leave their figures
-- here, per workspace, UTC hour of the send, channel, provider account
-- and status (a receipt still pending past its deadline counts as
-- unknown), so the rates read the same after a purge as before it.
CREATE TABLE receipt_rollup (
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    -- Start of the UTC hour, Unix milliseconds.
    bucket BIGINT NOT NULL,
    channel TEXT NOT NULL,
    provider_account_id TEXT NOT NULL,
    provider_kind TEXT NOT NULL,
    status TEXT NOT NULL,
    n BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, bucket, channel, provider_account_id, provider_kind, status)
);
