-- A queue job may carry many requests (a group commit's sends, a fan-out
-- batch): its run finds them by their job rows' queue job id.
CREATE INDEX notification_jobs_queue_job ON notification_jobs (queue_job_id);
