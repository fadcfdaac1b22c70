-- Requests of no campaign stay out of the campaign index. (The unique
-- idempotency key is a table constraint here, which SQLite cannot change
-- without rebuilding the table; it keeps indexing every request.)
DROP INDEX notification_requests_campaign;
CREATE INDEX notification_requests_campaign ON notification_requests (campaign_id) WHERE campaign_id IS NOT NULL;
