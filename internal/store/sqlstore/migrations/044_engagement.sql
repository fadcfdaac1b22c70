-- Email engagement (issue 35, item 4): opt-in open and click tracking.
--
-- tracking_settings: a workspace's choices, one row per scope. scope is
-- workspace (scope_key ''), category (the category key) or campaign (the
-- campaign id). opens and clicks are NULL where the scope inherits from
-- the wider one (campaign, then category, then workspace; a workspace
-- without a row tracks nothing).
CREATE TABLE tracking_settings (
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    scope TEXT NOT NULL,
    scope_key TEXT NOT NULL DEFAULT '',
    opens BOOLEAN,
    clicks BOOLEAN,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, scope, scope_key)
);

-- request_engagement: the opens and clicks of one request. Hits flagged
-- as likely scanners count apart and set no first_* time. opened_event
-- and clicked_event mark the notification.opened / .clicked event as
-- written, so each fires once. No client address or agent is stored.
-- (No reference to the request: hits are written in batches after the
-- redirect answered, and retention purges these rows with their request.)
CREATE TABLE request_engagement (
    request_id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    campaign_id TEXT NOT NULL DEFAULT '',
    opens INTEGER NOT NULL DEFAULT 0,
    clicks INTEGER NOT NULL DEFAULT 0,
    scanner_opens INTEGER NOT NULL DEFAULT 0,
    scanner_clicks INTEGER NOT NULL DEFAULT 0,
    first_opened_at BIGINT,
    first_clicked_at BIGINT,
    last_at BIGINT NOT NULL,
    opened_event BOOLEAN NOT NULL DEFAULT FALSE,
    clicked_event BOOLEAN NOT NULL DEFAULT FALSE
);
-- A campaign's statistics.
CREATE INDEX request_engagement_campaign ON request_engagement (campaign_id);

-- campaign_links: the clicks of one link of a campaign, keyed by a hash
-- of its URL (a URL may be longer than an index entry allows).
CREATE TABLE campaign_links (
    campaign_id TEXT NOT NULL,
    url_hash TEXT NOT NULL,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    url TEXT NOT NULL,
    link_index INTEGER NOT NULL,
    clicks INTEGER NOT NULL DEFAULT 0,
    scanner_clicks INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (campaign_id, url_hash)
);
