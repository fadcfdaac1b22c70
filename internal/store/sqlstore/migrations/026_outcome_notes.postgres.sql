-- Outcome notes (issue 31, item 1; docs/DECISIONS.md "Duplicates after a
-- crash"): a delivery outcome written as soon as its vendor call answers,
-- read when a dead process's run is taken over. UNLOGGED: no WAL, so a
-- note costs little; PostgreSQL empties the table after its own crash
-- (and a standby has none), which costs only messages sent again: notes
-- guard against notifyd's death, not the database's.
CREATE UNLOGGED TABLE outcome_notes (
	job_id TEXT PRIMARY KEY,
	run_started_at BIGINT NOT NULL,
	attempts_made INTEGER NOT NULL,
	body TEXT NOT NULL,
	created_at BIGINT NOT NULL
);
