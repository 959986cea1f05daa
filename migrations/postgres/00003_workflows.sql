-- Workflows and integrations. A workflow's actions (their configs may hold secrets) and an
-- integration's credentials are sealed (AES-256-GCM) with the workspace's data key; the trigger
-- (event type and conditions) is plain JSON.

-- +goose Up
CREATE TABLE workflows (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL,
    form_id      TEXT NOT NULL,
    name         TEXT NOT NULL,
    enabled      INTEGER NOT NULL,
    trigger_type TEXT NOT NULL,
    conditions   TEXT NOT NULL,
    actions      BYTEA NOT NULL,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL,
    -- deleting a form deletes its workflows
    FOREIGN KEY (workspace_id, form_id) REFERENCES forms (workspace_id, id) ON DELETE CASCADE
);
CREATE INDEX workflows_workspace_created_idx ON workflows (workspace_id, created_at DESC, id DESC);
CREATE INDEX workflows_form_idx ON workflows (form_id, created_at, id);

CREATE TABLE integrations (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    type         TEXT NOT NULL,
    credentials  BYTEA NOT NULL,
    created_at   BIGINT NOT NULL
);
CREATE INDEX integrations_workspace_created_idx ON integrations (workspace_id, created_at DESC, id DESC);

-- +goose Down
DROP TABLE integrations;
DROP TABLE workflows;
