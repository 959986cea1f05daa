-- +goose Up
-- Drafts: a respondent's saved progress on a form with settings.partial on. answers holds the
-- answers as typed, the page's language and the resume address, sealed with the workspace's
-- data key; secret_hash is the SHA-256 of the resume link's secret. A submitted draft keeps
-- its row without answers until expires_at, so its link can say "already used".
CREATE TABLE drafts (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL,
    form_id      TEXT NOT NULL,
    secret_hash  BLOB NOT NULL,
    page         INTEGER NOT NULL DEFAULT 0,
    emailed      INTEGER NOT NULL DEFAULT 0,
    answers      BLOB,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    expires_at   INTEGER NOT NULL,
    submitted_at INTEGER
);
CREATE INDEX drafts_form_created_idx ON drafts (form_id, created_at DESC, id DESC);
CREATE INDEX drafts_expires_idx ON drafts (expires_at);

-- The blind index (keyed hash) of each address a draft holds, for privacy requests.
CREATE TABLE draft_emails (
    draft_id     TEXT NOT NULL REFERENCES drafts (id) ON DELETE CASCADE,
    workspace_id TEXT NOT NULL,
    email_hash   BLOB NOT NULL,
    PRIMARY KEY (draft_id, email_hash)
);
CREATE INDEX draft_emails_hash_idx ON draft_emails (workspace_id, email_hash);

-- +goose Down
DROP TABLE draft_emails;
DROP TABLE drafts;
