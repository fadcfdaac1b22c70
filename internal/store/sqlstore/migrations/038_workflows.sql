-- Workflows (issue 34). A definition (workflows) has versions of its
-- steps (a JSON array); published_version names the one triggers use (0:
-- none yet). A run is one recipient's trip through one version; its
-- reached steps are workflow_run_steps, a pending one carrying the queue
-- job that will run it (inserted in the same transaction).
CREATE TABLE workflows (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    key TEXT NOT NULL,
    name TEXT NOT NULL,
    published_version INTEGER NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    UNIQUE (workspace_id, key)
);

CREATE TABLE workflow_versions (
    workflow_id TEXT NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
    workspace_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    steps TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    published_at BIGINT,
    PRIMARY KEY (workflow_id, version)
);

-- recipient_id is the profile's external id. idempotency_key is NULL
-- when the trigger gave none; a repeated key (per workflow and
-- recipient) starts nothing. cancellation_key is '' when none. digest is
-- the JSON of a released digest ({"count", "items"}), NULL before.
CREATE TABLE workflow_runs (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    workflow_id TEXT NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
    workflow_key TEXT NOT NULL,
    version INTEGER NOT NULL,
    recipient_id TEXT NOT NULL,
    payload TEXT NOT NULL,
    idempotency_key TEXT,
    cancellation_key TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL,
    digest TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    ended_at BIGINT
);
CREATE UNIQUE INDEX workflow_runs_idempotency ON workflow_runs (workspace_id, workflow_id, recipient_id, idempotency_key)
    WHERE idempotency_key IS NOT NULL;
CREATE INDEX workflow_runs_workflow ON workflow_runs (workspace_id, workflow_id, created_at DESC, id DESC);
CREATE INDEX workflow_runs_recipient ON workflow_runs (workspace_id, recipient_id, created_at DESC, id DESC);
CREATE INDEX workflow_runs_cancel ON workflow_runs (workspace_id, workflow_id, cancellation_key) WHERE status = 'running';

-- step_index is the step's place in the version's steps; a step is
-- reached at most once per run (branches only jump forward).
CREATE TABLE workflow_run_steps (
    run_id TEXT NOT NULL REFERENCES workflow_runs(id) ON DELETE CASCADE,
    workspace_id TEXT NOT NULL,
    step_index INTEGER NOT NULL,
    step_key TEXT NOT NULL,
    step_type TEXT NOT NULL,
    status TEXT NOT NULL,
    outcome TEXT NOT NULL DEFAULT '',
    request_id TEXT NOT NULL DEFAULT '',
    due_at BIGINT NOT NULL,
    queue_job_id BIGINT,
    created_at BIGINT NOT NULL,
    ended_at BIGINT,
    PRIMARY KEY (run_id, step_index)
);

-- The runs that passed a throttle step, counted per workflow, recipient
-- and key over the step's window.
CREATE TABLE workflow_throttles (
    workspace_id TEXT NOT NULL,
    workflow_id TEXT NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
    recipient_key TEXT NOT NULL,
    run_id TEXT NOT NULL,
    at BIGINT NOT NULL,
    PRIMARY KEY (workflow_id, recipient_key, run_id)
);
CREATE INDEX workflow_throttles_at ON workflow_throttles (workflow_id, recipient_key, at);

-- A digest window: open (released false) until the run that opened it
-- releases it. At most one open window per workflow, recipient and key,
-- whatever the number of processes: joining takes the open row's lock
-- (an UPDATE of its count), opening is an insert the partial unique
-- index admits once.
CREATE TABLE workflow_digests (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL,
    workflow_id TEXT NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
    recipient_id TEXT NOT NULL,
    digest_key TEXT NOT NULL,
    run_id TEXT NOT NULL,
    count INTEGER NOT NULL,
    window_end BIGINT NOT NULL,
    released BOOLEAN NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX workflow_digests_open ON workflow_digests (workflow_id, recipient_id, digest_key) WHERE released = false;
CREATE INDEX workflow_digests_run ON workflow_digests (run_id);

CREATE TABLE workflow_digest_items (
    digest_id TEXT NOT NULL REFERENCES workflow_digests(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    run_id TEXT NOT NULL,
    payload TEXT NOT NULL,
    PRIMARY KEY (digest_id, seq)
);
