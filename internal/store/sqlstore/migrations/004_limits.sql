-- Request rate-limit policies and their fixed-window counters, and
-- dispatch limits (token buckets toward providers).
CREATE TABLE rate_limit_policies (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    -- '' is the workspace policy, otherwise an API key credential id.
    api_key_id TEXT NOT NULL DEFAULT '',
    window_seconds INTEGER NOT NULL,
    max_requests INTEGER NOT NULL,
    enabled BOOLEAN NOT NULL,
    updated_at BIGINT NOT NULL,
    UNIQUE (workspace_id, api_key_id)
);
CREATE TABLE rate_limit_counters (
    scope_key TEXT NOT NULL,
    window_start BIGINT NOT NULL,
    count INTEGER NOT NULL,
    PRIMARY KEY (scope_key, window_start)
);
CREATE INDEX rate_limit_counters_window_start ON rate_limit_counters (window_start);
CREATE TABLE dispatch_limits (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    scope TEXT NOT NULL,
    -- '' for the workspace scope.
    target_id TEXT NOT NULL DEFAULT '',
    rate_per_second INTEGER NOT NULL,
    enabled BOOLEAN NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    UNIQUE (workspace_id, scope, target_id)
);
