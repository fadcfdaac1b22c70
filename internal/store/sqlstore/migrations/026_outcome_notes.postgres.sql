-- Outcome notes (issue 31, item 1; docs/DECISIONS.md "Duplicates after a
-- crash"): a delivery outcome written as soon as its vendor call answers,
-- read when a dead process's run is taken over.
CREATE TABLE outcome_notes (
	job_id TEXT PRIMARY KEY,
	run_started_at BIGINT NOT NULL,
	attempts_made INTEGER NOT NULL,
	body TEXT NOT NULL,
	created_at BIGINT NOT NULL
);
CREATE INDEX outcome_notes_created ON outcome_notes (created_at);
