-- The version of a workspace's recipient profiles and their own
-- preferences: every write of a profile (put, change, bulk upsert,
-- erasure) or of a profile's preferences stores a fresh random value in
-- its own transaction, so a process may keep the profiles that sends by
-- recipient id read in memory while the versions it read with a send are
-- the ones it holds (issue 32; sqlstore/profilecache.go).
ALTER TABLE workspaces ADD COLUMN recipients_version BIGINT NOT NULL DEFAULT 0;
