-- Notification runs: a form's owner notification and respondent confirmation run on the
-- workflow run engine, so a run now has a kind (workflow, owner, respondent) and a workflow
-- only when its kind is workflow. A notification run is unique per form, event and kind, so a
-- redelivered event never sends twice. SQLite cannot drop NOT NULL in place: the table is
-- rebuilt with its rows.

-- +goose Up
CREATE TABLE runs_new (
    id              TEXT PRIMARY KEY,
    workspace_id    TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    kind            TEXT NOT NULL DEFAULT 'workflow',
    workflow_id     TEXT,
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
    UNIQUE (workflow_id, event_id),
    CHECK ((kind = 'workflow') = (workflow_id IS NOT NULL))
);
INSERT INTO runs_new (id, workspace_id, kind, workflow_id, form_id, submission_id, event_id, event_type, occurred_at,
    status, actions, fields, next_attempt_at, created_at, updated_at, finished_at)
SELECT id, workspace_id, 'workflow', workflow_id, form_id, submission_id, event_id, event_type, occurred_at,
    status, actions, fields, next_attempt_at, created_at, updated_at, finished_at FROM runs;
DROP TABLE runs;
ALTER TABLE runs_new RENAME TO runs;
CREATE INDEX runs_due_idx ON runs (next_attempt_at) WHERE status IN ('queued', 'running');
CREATE INDEX runs_workflow_created_idx ON runs (workflow_id, created_at DESC, id DESC);
CREATE INDEX runs_workspace_due_idx ON runs (workspace_id, next_attempt_at, id) WHERE status IN ('queued', 'running');
CREATE UNIQUE INDEX runs_notification_event_idx ON runs (form_id, event_id, kind) WHERE workflow_id IS NULL;
CREATE INDEX runs_notification_created_idx ON runs (form_id, created_at DESC, id DESC) WHERE workflow_id IS NULL;

-- +goose Down
DELETE FROM runs WHERE workflow_id IS NULL;
CREATE TABLE runs_old (
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
    UNIQUE (workflow_id, event_id)
);
INSERT INTO runs_old (id, workspace_id, workflow_id, form_id, submission_id, event_id, event_type, occurred_at,
    status, actions, fields, next_attempt_at, created_at, updated_at, finished_at)
SELECT id, workspace_id, workflow_id, form_id, submission_id, event_id, event_type, occurred_at,
    status, actions, fields, next_attempt_at, created_at, updated_at, finished_at FROM runs;
DROP TABLE runs;
ALTER TABLE runs_old RENAME TO runs;
CREATE INDEX runs_due_idx ON runs (next_attempt_at) WHERE status IN ('queued', 'running');
CREATE INDEX runs_workflow_created_idx ON runs (workflow_id, created_at DESC, id DESC);
CREATE INDEX runs_workspace_due_idx ON runs (workspace_id, next_attempt_at, id) WHERE status IN ('queued', 'running');
