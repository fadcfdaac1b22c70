-- Heartbeats of live worker processes: each upserts its row about every
-- second with its demand per dispatch-limit key (sends per second, JSON
-- object), and the processes split each configured rate among the live
-- rows. Rows older than a few seconds are stale and deleted.
CREATE TABLE dispatch_workers (
    worker_id TEXT PRIMARY KEY,
    demand TEXT NOT NULL,
    heartbeat_at BIGINT NOT NULL
);
CREATE INDEX dispatch_workers_heartbeat_at ON dispatch_workers (heartbeat_at);
