-- Retention (NOTIFYD_RETENTION, NOTIFYD_AUDIT_RETENTION). Purged requests
-- and attempts leave their figures in activity_rollup (per workspace and
-- UTC hour of acceptance or start), and campaign requests theirs in
-- campaign_rollup, so /v1/metrics and a campaign's deliveryStats count the
-- same after a purge as before it.
CREATE TABLE activity_rollup (
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    -- Start of the UTC hour, Unix milliseconds.
    bucket BIGINT NOT NULL,
    -- 'request' (by requested_at) or 'attempt' (by started_at).
    kind TEXT NOT NULL,
    -- '' for attempts.
    channel TEXT NOT NULL,
    status TEXT NOT NULL,
    n BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, bucket, kind, channel, status)
);
CREATE TABLE campaign_rollup (
    campaign_id TEXT NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
    status TEXT NOT NULL,
    n BIGINT NOT NULL,
    PRIMARY KEY (campaign_id, status)
);
-- A request whose job is in the dead-letter queue stays (SPEC keeps the
-- last 10,000 dead letters, and the job list shows them): the purge asks
-- this index.
CREATE INDEX dead_letters_request ON dead_letters (request_id);
-- The audit purge reads the oldest entries of every workspace.
CREATE INDEX audit_logs_created ON audit_logs (created_at);
