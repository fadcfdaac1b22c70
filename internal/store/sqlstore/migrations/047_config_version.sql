-- The version of a workspace's send configuration (categories, default
-- preferences, send windows): every write of it stores a fresh random
-- value in its own transaction, so a process may keep the configuration
-- in memory while the version it read with a send is the one it holds
-- (issue 32; sqlstore/configcache.go).
ALTER TABLE workspaces ADD COLUMN config_version BIGINT NOT NULL DEFAULT 0;
