-- Test mode (issue 36, item 1). A test-mode API key (its key id starts
-- nk_test_) signs requests that run the whole pipeline but are delivered
-- to the in-process provider simulator only; every request it signs
-- carries test = TRUE, so the worker, the lookups, the console and the
-- metrics know it without reading the key (which may be revoked or
-- deleted since).
ALTER TABLE api_keys ADD COLUMN test BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE notification_requests ADD COLUMN test BOOLEAN NOT NULL DEFAULT FALSE;
