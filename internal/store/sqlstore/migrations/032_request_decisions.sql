-- What notifyd decided about a request and why (issue 32, item 7): a JSON
-- array of notify.Decision written at acceptance and appended to at
-- dispatch. NULL for a send by address without a category, which decides
-- nothing of the kind.
ALTER TABLE notification_requests ADD COLUMN decisions TEXT;
