-- Cross-channel fallback (issue 21, item 4): a request's chain of further
-- channels, rendered at acceptance (JSON, NULL for a request without one),
-- and the step being delivered (0: the request's own channel). Neither is
-- indexed, so a step move stays an in-place (HOT) update on PostgreSQL.
ALTER TABLE notification_requests ADD COLUMN fallback TEXT;
ALTER TABLE notification_requests ADD COLUMN fallback_step INTEGER NOT NULL DEFAULT 0;
