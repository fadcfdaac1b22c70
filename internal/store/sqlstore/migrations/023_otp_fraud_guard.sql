-- OTP fraud guard against SMS pumping (issue 21, item 6; docs/OTP.md
-- "Fraud guard"): one settings row per workspace, and fixed-window
-- counters shared by every process (on PostgreSQL the upsert holds the
-- row lock until the send's transaction ends, so counts are exact across
-- API nodes). A limit column of 0 is off.
CREATE TABLE otp_fraud_guards (
    workspace_id TEXT PRIMARY KEY REFERENCES workspaces(id) ON DELETE CASCADE,
    enabled BOOLEAN NOT NULL,
    default_country_code TEXT NOT NULL,
    -- JSON array of calling codes, NULL for every country
    allowed_countries TEXT,
    prefix_digits INTEGER NOT NULL,
    prefix_window_seconds INTEGER NOT NULL,
    prefix_max_sends INTEGER NOT NULL,
    client_window_seconds INTEGER NOT NULL,
    client_max_sends INTEGER NOT NULL,
    daily_budget INTEGER NOT NULL,
    updated_at BIGINT NOT NULL
);
-- counter_key names the rule, its window length and a SHA-256 of the
-- prefix or client address (no number or address kept in the clear).
CREATE TABLE otp_fraud_counters (
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    counter_key TEXT NOT NULL,
    window_start BIGINT NOT NULL,
    window_end BIGINT NOT NULL,
    count INTEGER NOT NULL,
    PRIMARY KEY (workspace_id, counter_key, window_start)
);
CREATE INDEX otp_fraud_counters_window_end ON otp_fraud_counters (window_end);
