-- Template layouts and locales (issue 21, item 3). A workspace holds
-- several named layouts: an email header and footer around a {{content}}
-- slot, for the HTML part, the text part, or both. A template version may
-- name a layout (email templates only) and may carry a locale; a version
-- without a locale is in the template's default locale, which is what
-- every version written before this migration is.
CREATE TABLE layouts (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    html TEXT,
    text TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    UNIQUE (workspace_id, name)
);
ALTER TABLE template_versions ADD COLUMN locale TEXT;
ALTER TABLE template_versions ADD COLUMN layout_id TEXT REFERENCES layouts(id);
CREATE INDEX template_versions_layout ON template_versions(layout_id) WHERE layout_id IS NOT NULL;
