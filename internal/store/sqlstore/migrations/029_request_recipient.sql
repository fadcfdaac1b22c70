-- A send may name a recipient profile instead of an address (issue 32,
-- item 2): recipient_id keeps the profile's external id as the send named
-- it (the address taken from the profile is in recipient_address), and
-- category the send's category (item 3). Both NULL for a send by address.
ALTER TABLE notification_requests ADD COLUMN recipient_id TEXT;
ALTER TABLE notification_requests ADD COLUMN category TEXT;
