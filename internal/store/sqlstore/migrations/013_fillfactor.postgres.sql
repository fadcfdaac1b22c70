-- Room on each page for the new versions of the rows delivery updates,
-- so the updates stay on their page (HOT) instead of moving the row and
-- adding index entries. New pages take effect; existing ones as they are
-- rewritten.
ALTER TABLE notification_requests SET (fillfactor = 70);
ALTER TABLE notification_jobs SET (fillfactor = 80);
