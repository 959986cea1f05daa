-- +goose Up
-- People, their memberships of workspaces, invitations, dashboard sessions, the audit log, and
-- the workspace's billing settings. Secrets are kept only as hashes (tokens, recovery codes),
-- as argon2id (passwords) or sealed (TOTP secrets).
ALTER TABLE workspaces ADD COLUMN billing_email TEXT NOT NULL DEFAULT '';
ALTER TABLE workspaces ADD COLUMN status TEXT NOT NULL DEFAULT 'active';
ALTER TABLE workspaces ADD COLUMN cancelled_at INTEGER;
ALTER TABLE workspaces ADD COLUMN data_deletion_at INTEGER;
ALTER TABLE workspaces ADD COLUMN retained_plan TEXT NOT NULL DEFAULT '';
ALTER TABLE workspaces ADD COLUMN updated_at INTEGER NOT NULL DEFAULT 0;
UPDATE workspaces SET updated_at = created_at;

ALTER TABLE api_keys ADD COLUMN created_by_type TEXT NOT NULL DEFAULT 'system';
ALTER TABLE api_keys ADD COLUMN created_by_id TEXT NOT NULL DEFAULT 'system';
ALTER TABLE api_keys ADD COLUMN created_by_name TEXT NOT NULL DEFAULT 'Formward';
ALTER TABLE api_keys ADD COLUMN last_used_at INTEGER;

CREATE TABLE users (
    id                  TEXT PRIMARY KEY,
    email               TEXT NOT NULL UNIQUE,
    name                TEXT NOT NULL DEFAULT '',
    password_hash       TEXT NOT NULL DEFAULT '',
    totp_secret         BLOB,
    recovery_codes      TEXT NOT NULL DEFAULT '[]',
    oidc_subject        TEXT,
    created_at          INTEGER NOT NULL,
    password_changed_at INTEGER
);
CREATE UNIQUE INDEX users_oidc_subject_idx ON users (oidc_subject) WHERE oidc_subject IS NOT NULL;

CREATE TABLE memberships (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    user_id      TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role         TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    UNIQUE (workspace_id, user_id)
);
CREATE INDEX memberships_workspace_idx ON memberships (workspace_id, created_at, id);
CREATE INDEX memberships_user_idx ON memberships (user_id, created_at, id);

CREATE TABLE invitations (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    email        TEXT NOT NULL,
    role         TEXT NOT NULL,
    token_hash   BLOB NOT NULL UNIQUE,
    invited_by   TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    expires_at   INTEGER NOT NULL,
    accepted_at  INTEGER
);
CREATE INDEX invitations_workspace_idx ON invitations (workspace_id, created_at DESC, id DESC);

CREATE TABLE sessions (
    id           TEXT PRIMARY KEY,
    token_hash   BLOB NOT NULL UNIQUE,
    user_id      TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    workspace_id TEXT NOT NULL DEFAULT '',
    created_at   INTEGER NOT NULL,
    last_seen_at INTEGER NOT NULL
);
CREATE INDEX sessions_user_idx ON sessions (user_id);

-- Never updated; kept 400 days. No foreign key: the log outlives what it names.
CREATE TABLE audit_events (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL,
    action       TEXT NOT NULL,
    actor_type   TEXT NOT NULL,
    actor_id     TEXT NOT NULL,
    actor_name   TEXT NOT NULL,
    target_type  TEXT,
    target_id    TEXT,
    ip_hash      TEXT,
    details      TEXT NOT NULL,
    created_at   INTEGER NOT NULL
);
CREATE INDEX audit_events_workspace_idx ON audit_events (workspace_id, created_at DESC, id DESC);
CREATE INDEX audit_events_action_idx ON audit_events (workspace_id, action, created_at DESC, id DESC);
CREATE INDEX audit_events_created_idx ON audit_events (created_at);

-- Failed sign-ins per subject (an email's hash or an IP hash), for throttling across processes.
CREATE TABLE sign_in_failures (
    subject TEXT NOT NULL,
    at      INTEGER NOT NULL
);
CREATE INDEX sign_in_failures_subject_idx ON sign_in_failures (subject, at);

-- +goose Down
DROP TABLE sign_in_failures;
DROP TABLE audit_events;
DROP TABLE sessions;
DROP TABLE invitations;
DROP TABLE memberships;
DROP TABLE users;
ALTER TABLE api_keys DROP COLUMN last_used_at;
ALTER TABLE api_keys DROP COLUMN created_by_name;
ALTER TABLE api_keys DROP COLUMN created_by_id;
ALTER TABLE api_keys DROP COLUMN created_by_type;
ALTER TABLE workspaces DROP COLUMN updated_at;
ALTER TABLE workspaces DROP COLUMN retained_plan;
ALTER TABLE workspaces DROP COLUMN data_deletion_at;
ALTER TABLE workspaces DROP COLUMN cancelled_at;
ALTER TABLE workspaces DROP COLUMN status;
ALTER TABLE workspaces DROP COLUMN billing_email;
