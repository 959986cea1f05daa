-- Formward schema, SQLite. Times are INTEGER unix milliseconds UTC, as on PostgreSQL.
-- Everything a respondent submitted lives only in the sealed (AES-256-GCM) BLOB columns.

-- +goose Up
CREATE TABLE workspaces (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL,
    plan       TEXT NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE INDEX workspaces_created_idx ON workspaces (created_at, id);

CREATE TABLE api_keys (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    scope        TEXT NOT NULL,
    secret_hash  BLOB NOT NULL,
    created_at   INTEGER NOT NULL,
    revoked_at   INTEGER
);
CREATE INDEX api_keys_workspace_idx ON api_keys (workspace_id, created_at, id);

CREATE TABLE data_keys (
    id            TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL,
    master_key_id TEXT NOT NULL,
    wrapped       BLOB NOT NULL,
    created_at    INTEGER NOT NULL,
    UNIQUE (workspace_id, id)
);
CREATE INDEX data_keys_current_idx ON data_keys (workspace_id, created_at DESC, id DESC);

CREATE TABLE forms (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL,
    name         TEXT NOT NULL,
    description  TEXT,
    status       TEXT NOT NULL,
    fields       TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    -- target of the submissions foreign key, so a submission can only name a form of its own workspace
    UNIQUE (workspace_id, id)
);
CREATE INDEX forms_workspace_created_idx ON forms (workspace_id, created_at DESC, id DESC);
CREATE INDEX forms_workspace_status_created_idx ON forms (workspace_id, status, created_at DESC, id DESC);

CREATE TABLE submissions (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL,
    form_id      TEXT NOT NULL,
    submitted_at INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    sealed       BLOB NOT NULL,
    FOREIGN KEY (workspace_id, form_id) REFERENCES forms (workspace_id, id) ON DELETE CASCADE
);
CREATE INDEX submissions_form_submitted_idx ON submissions (form_id, submitted_at DESC, id DESC);

-- submission_count, spread over shards (one per group committer) so no single row serialises capture
CREATE TABLE form_counters (
    form_id TEXT NOT NULL REFERENCES forms (id) ON DELETE CASCADE,
    shard   INTEGER NOT NULL,
    n       INTEGER NOT NULL,
    PRIMARY KEY (form_id, shard)
);

CREATE TABLE outbox (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    id           TEXT NOT NULL UNIQUE,
    type         TEXT NOT NULL,
    workspace_id TEXT NOT NULL,
    form_id      TEXT NOT NULL,
    payload      BLOB NOT NULL,
    created_at   INTEGER NOT NULL,
    published_at INTEGER
);
CREATE INDEX outbox_unpublished_idx ON outbox (seq) WHERE published_at IS NULL;
CREATE INDEX outbox_published_idx ON outbox (published_at) WHERE published_at IS NOT NULL;

CREATE TABLE idempotency_keys (
    workspace_id TEXT NOT NULL,
    scope        TEXT NOT NULL,
    key          TEXT NOT NULL,
    fingerprint  BLOB NOT NULL,
    status       INTEGER,
    body         BLOB,
    created_at   INTEGER NOT NULL,
    PRIMARY KEY (workspace_id, scope, key)
);
CREATE INDEX idempotency_keys_created_idx ON idempotency_keys (created_at);

-- +goose Down
DROP TABLE idempotency_keys;
DROP TABLE outbox;
DROP TABLE form_counters;
DROP TABLE submissions;
DROP TABLE forms;
DROP TABLE data_keys;
DROP TABLE api_keys;
DROP TABLE workspaces;
