-- A request's status moves twice per delivery (processing, then final):
-- no index keeps it, so PostgreSQL updates the row in place (a HOT
-- update, with no new index entries). The campaign statistics read the
-- status from the rows of the campaign's index range.
DROP INDEX notification_requests_campaign;
CREATE INDEX notification_requests_campaign ON notification_requests (campaign_id);
