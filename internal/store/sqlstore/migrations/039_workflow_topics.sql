-- Topics of workflow triggers (issue 34): recipient profiles (by
-- external id) subscribed to a workspace's topic keys. A trigger to a
-- topic starts one run per subscriber. The subscription goes with its
-- profile when the profile is erased (DeleteRecipient deletes it, and
-- the profile's workflow runs and digest windows).
CREATE TABLE topic_subscriptions (
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    topic_key TEXT NOT NULL,
    recipient_id TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, topic_key, recipient_id)
);
