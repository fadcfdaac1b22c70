-- The send pipeline: templates, requests and their queue jobs, attempts,
-- the event outbox, dead letters, circuit breakers and email suppressions.
CREATE TABLE templates (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    code TEXT NOT NULL,
    channel TEXT NOT NULL,
    name TEXT NOT NULL,
    status TEXT NOT NULL,
    review_status TEXT,
    provider_account_id TEXT,
    vendor_template_id TEXT,
    sender_profile_key TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    UNIQUE (workspace_id, code, channel)
);
CREATE TABLE template_versions (
    template_id TEXT NOT NULL REFERENCES templates(id) ON DELETE CASCADE,
    version INTEGER NOT NULL,
    title TEXT,
    text TEXT NOT NULL,
    html TEXT,
    published_at BIGINT,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (template_id, version)
);
CREATE TABLE notification_requests (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    api_key_id TEXT,
    source TEXT NOT NULL,
    channel TEXT NOT NULL,
    status TEXT NOT NULL,
    recipient_address TEXT NOT NULL,
    recipient_name TEXT,
    title TEXT,
    text TEXT,
    html TEXT,
    template_code TEXT,
    template_variables TEXT,
    vendor_template_id TEXT,
    sender_profile_key TEXT,
    headers TEXT,
    metadata TEXT,
    preferred_provider_ids TEXT,
    idempotency_key TEXT,
    campaign_id TEXT,
    requested_at BIGINT NOT NULL,
    scheduled_at BIGINT,
    updated_at BIGINT NOT NULL,
    selected_provider_account_id TEXT,
    selected_provider_message_id TEXT,
    final_error_code TEXT,
    final_error_message TEXT,
    UNIQUE (workspace_id, idempotency_key)
);
CREATE INDEX notification_requests_ws_time ON notification_requests(workspace_id, requested_at);
CREATE INDEX notification_requests_campaign ON notification_requests(campaign_id, status);
CREATE TABLE notification_jobs (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL,
    request_id TEXT NOT NULL UNIQUE REFERENCES notification_requests(id) ON DELETE CASCADE,
    queue_job_id BIGINT NOT NULL,
    status TEXT NOT NULL,
    attempts_made INTEGER NOT NULL,
    max_attempts INTEGER NOT NULL,
    queued_at BIGINT NOT NULL,
    scheduled_at BIGINT,
    started_at BIGINT,
    finished_at BIGINT,
    next_retry_at BIGINT,
    last_error_code TEXT,
    last_error_message TEXT,
    last_provider_account_id TEXT
);
CREATE INDEX notification_jobs_ws_status ON notification_jobs(workspace_id, status, queued_at);
CREATE TABLE attempts (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL,
    request_id TEXT NOT NULL REFERENCES notification_requests(id) ON DELETE CASCADE,
    job_id TEXT NOT NULL,
    provider_account_id TEXT NOT NULL,
    provider_kind TEXT NOT NULL,
    provider_display_name TEXT NOT NULL,
    channel TEXT NOT NULL,
    status TEXT NOT NULL,
    failure_code TEXT,
    failure_message TEXT,
    provider_message_id TEXT,
    started_at BIGINT NOT NULL,
    finished_at BIGINT NOT NULL,
    request_json TEXT NOT NULL,
    response_json TEXT NOT NULL
);
CREATE INDEX attempts_ws_time ON attempts(workspace_id, started_at DESC, id DESC);
CREATE INDEX attempts_request ON attempts(request_id, started_at);
CREATE TABLE events (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL,
    type TEXT NOT NULL,
    request_id TEXT NOT NULL,
    payload TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    dispatched_at BIGINT
);
CREATE INDEX events_pending ON events(dispatched_at, created_at);
CREATE TABLE dead_letters (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL,
    job_id TEXT NOT NULL,
    request_id TEXT NOT NULL,
    channel TEXT NOT NULL,
    failed_reason TEXT NOT NULL,
    failed_at BIGINT NOT NULL,
    attempts_made INTEGER NOT NULL
);
CREATE INDEX dead_letters_ws_time ON dead_letters(workspace_id, failed_at DESC, id DESC);
CREATE TABLE breakers (
    provider_account_id TEXT PRIMARY KEY,
    state TEXT NOT NULL,
    failures INTEGER NOT NULL,
    opened_until BIGINT NOT NULL,
    trial_in_flight BOOLEAN NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE TABLE suppressions (
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    address TEXT NOT NULL,
    reason TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, address)
);
