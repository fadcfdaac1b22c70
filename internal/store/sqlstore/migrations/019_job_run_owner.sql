-- The worker process whose run claimed a job last: when that process's
-- heartbeat has stopped, the run is dead and the job is taken over at
-- once instead of after the run bound (issue 16, fast rescue).
ALTER TABLE notification_jobs ADD COLUMN run_owner TEXT;
