-- Newsletter campaigns and their fan-out. A campaign's counters are
-- updated per fan-out batch. campaign_recipients records every subscriber
-- the fan-out has handled, in the same transaction as the subscriber's
-- request and queue job: its unique key makes a retried or resumed fan-out
-- skip everyone already queued, so nobody is mailed twice.
CREATE TABLE campaigns (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    channel TEXT NOT NULL,
    status TEXT NOT NULL,
    subject TEXT NOT NULL DEFAULT '',
    content_text TEXT NOT NULL,
    content_html TEXT NOT NULL DEFAULT '',
    is_advertisement BOOLEAN NOT NULL,
    include_unsubscribe BOOLEAN NOT NULL,
    -- The audienceFilter object as given (JSON), NULL when absent.
    audience_filter TEXT,
    scheduled_at BIGINT,
    total_recipients INTEGER NOT NULL DEFAULT 0,
    queued_count INTEGER NOT NULL DEFAULT 0,
    failed_count INTEGER NOT NULL DEFAULT 0,
    -- The River job of the current fan-out; a run of any other job is a no-op.
    fanout_job_id BIGINT,
    -- Public base URL of the unsubscribe links, fixed at send.
    link_base TEXT NOT NULL DEFAULT '',
    started_at BIGINT,
    fanout_done_at BIGINT,
    finished_at BIGINT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX campaigns_list ON campaigns (workspace_id, created_at DESC, id DESC);

CREATE TABLE campaign_recipients (
    campaign_id TEXT NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
    subscriber_id TEXT NOT NULL,
    -- NULL when no request could be made for the subscriber (failedCount).
    request_id TEXT,
    UNIQUE (campaign_id, subscriber_id)
);

-- The fan-out pages a workspace's sendable subscribers by id.
CREATE INDEX subscribers_fanout ON subscribers (workspace_id, channel, consent_status, id);
