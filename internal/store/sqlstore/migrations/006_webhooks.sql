-- Signed event webhooks: endpoints, one delivery per (endpoint, event) and
-- every HTTP try of it. Secrets are sealed with the secret box; the
-- previous secret keeps signing until previous_secret_expires_at.
CREATE TABLE webhooks (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    url TEXT NOT NULL,
    -- JSON array of event types.
    events TEXT NOT NULL,
    enabled BOOLEAN NOT NULL,
    secret_enc TEXT NOT NULL,
    previous_secret_enc TEXT,
    previous_secret_expires_at BIGINT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX webhooks_ws ON webhooks (workspace_id, created_at, id);
CREATE TABLE webhook_deliveries (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL,
    webhook_id TEXT NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
    event_id TEXT NOT NULL,
    event_type TEXT NOT NULL,
    request_id TEXT NOT NULL,
    -- The exact body sent on every try.
    body TEXT NOT NULL,
    status TEXT NOT NULL,
    attempts INTEGER NOT NULL,
    run_attempts INTEGER NOT NULL,
    queue_job_id BIGINT NOT NULL,
    next_attempt_at BIGINT,
    last_http_status INTEGER,
    last_error TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    finished_at BIGINT,
    UNIQUE (webhook_id, event_id)
);
CREATE INDEX webhook_deliveries_list ON webhook_deliveries (webhook_id, created_at DESC, id DESC);
-- Pruning of old finished deliveries.
CREATE INDEX webhook_deliveries_finished ON webhook_deliveries (finished_at) WHERE finished_at IS NOT NULL;
CREATE TABLE webhook_tries (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL,
    delivery_id TEXT NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
    attempt INTEGER NOT NULL,
    http_status INTEGER,
    error TEXT,
    duration_ms BIGINT NOT NULL,
    response_excerpt TEXT,
    created_at BIGINT NOT NULL
);
CREATE INDEX webhook_tries_delivery ON webhook_tries (delivery_id, attempt);
-- The relay scans undispatched events only.
CREATE INDEX events_undispatched ON events (created_at) WHERE dispatched_at IS NULL;
