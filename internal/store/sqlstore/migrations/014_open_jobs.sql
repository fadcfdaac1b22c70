-- The job list shows unfinished jobs (and dead letters, which have their
-- own table). A partial index on the unfinished ones replaces the index
-- that kept every job's status: a job's move to processing changes no
-- indexed column, so PostgreSQL updates it in place (HOT).
DROP INDEX notification_jobs_ws_status;
CREATE INDEX notification_jobs_open ON notification_jobs (workspace_id, queued_at) WHERE finished_at IS NULL;
