-- Pending invitations of existing users to a workspace (issue 17): adding
-- a user who already has an account offers the role, and the membership
-- exists only once the user accepts. One invitation per user and
-- workspace; a new one replaces it.
CREATE TABLE invitations (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    role TEXT NOT NULL,
    invited_by TEXT REFERENCES users(id) ON DELETE SET NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    UNIQUE (workspace_id, user_id)
);
CREATE INDEX invitations_user ON invitations(user_id, created_at);
CREATE INDEX invitations_expires ON invitations(expires_at);
