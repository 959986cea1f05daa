-- Workflow runs. The actions (each with its config snapshot, which may hold secrets, and its
-- attempts) and the submitted values the event carried are sealed (AES-256-GCM) with the
-- workspace's data key. There is no foreign key to workflows: deleting a workflow lets its runs
-- in progress finish, and their log stays readable by ID.

-- +goose Up
CREATE TABLE runs (
    id              TEXT PRIMARY KEY,
    workspace_id    TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    workflow_id     TEXT NOT NULL,
    form_id         TEXT NOT NULL,
    submission_id   TEXT NOT NULL,
    event_id        TEXT NOT NULL,
    event_type      TEXT NOT NULL,
    occurred_at     INTEGER NOT NULL,
    status          TEXT NOT NULL,
    actions         BLOB NOT NULL,
    fields          BLOB NOT NULL,
    next_attempt_at INTEGER,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    finished_at     INTEGER,
    -- a redelivered event never starts a second run
    UNIQUE (workflow_id, event_id)
);
CREATE INDEX runs_due_idx ON runs (next_attempt_at) WHERE status IN ('queued', 'running');
CREATE INDEX runs_workflow_created_idx ON runs (workflow_id, created_at DESC, id DESC);

-- +goose Down
DROP TABLE runs;
