-- The retention purge of inbox messages (NOTIFYD_RETENTION, as for the
-- requests that delivered them) reads them by age.
CREATE INDEX inbox_messages_created ON inbox_messages (created_at);
