-- Consents a recipient gave (issue 32, item 5), one row per profile and
-- kind: the Korean night-advertising consent first. They go with their
-- profile on erasure (ON DELETE CASCADE; SQLite runs with foreign_keys).
CREATE TABLE recipient_consents (
    recipient_id TEXT NOT NULL REFERENCES recipients(id) ON DELETE CASCADE,
    workspace_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    given_at BIGINT NOT NULL,
    source TEXT NOT NULL DEFAULT '',
    recorded_by TEXT NOT NULL,
    actor_id TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (recipient_id, kind)
);
