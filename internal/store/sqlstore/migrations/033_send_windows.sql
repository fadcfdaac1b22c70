-- Send windows (issue 32, item 5): the workspace's own (scope '') and one
-- per category (scope the category's id, which the foreign key removes
-- with its category). days is a JSON array of mon..sun.
CREATE TABLE send_windows (
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    scope TEXT NOT NULL,
    category_id TEXT REFERENCES categories(id) ON DELETE CASCADE,
    hours TEXT NOT NULL,
    days TEXT NOT NULL DEFAULT '[]',
    time_zone TEXT NOT NULL DEFAULT '',
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, scope)
);
