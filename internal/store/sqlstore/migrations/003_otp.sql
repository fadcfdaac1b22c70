-- One-time verification sessions and the per-recipient send counters.
CREATE TABLE otp_sessions (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    channel TEXT NOT NULL,
    mode TEXT NOT NULL,
    purpose TEXT NOT NULL DEFAULT '',
    -- normalized recipient
    recipient TEXT NOT NULL,
    recipient_masked TEXT NOT NULL,
    status TEXT NOT NULL,
    -- session-bound HMAC of the code (code mode, removed on success)
    code_hash TEXT,
    -- SHA-256 of the link token (link mode)
    link_hash TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    resend_count INTEGER NOT NULL DEFAULT 0,
    expires_at BIGINT NOT NULL,
    verified_at BIGINT,
    resend_available_at BIGINT NOT NULL,
    request_id TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX otp_sessions_link_hash ON otp_sessions (link_hash);
CREATE INDEX otp_sessions_workspace ON otp_sessions (workspace_id, created_at);
CREATE TABLE otp_send_counters (
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    recipient TEXT NOT NULL,
    -- 'h' hourly or 'd' daily UTC window
    window_kind TEXT NOT NULL,
    window_start BIGINT NOT NULL,
    count INTEGER NOT NULL,
    PRIMARY KEY (workspace_id, recipient, window_kind, window_start)
);
CREATE INDEX otp_send_counters_window_start ON otp_send_counters (window_start);
