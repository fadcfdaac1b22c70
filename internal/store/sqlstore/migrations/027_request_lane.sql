-- The lane a caller gave its bulk call (issue 31, item 2): 'bulk' puts
-- its requests behind transactional sends in the queue and in every
-- dispatch limit, as a campaign's; NULL is transactional.
ALTER TABLE notification_requests ADD COLUMN lane TEXT;
