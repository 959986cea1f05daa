-- Respondent privacy requests and the retention job.
--
-- submission_email_index holds, for each email answer of a submission, the keyed hash (HMAC-
-- SHA256 under a key of the workspace) of the trimmed, lower-cased address, never the address:
-- a privacy export or erase finds a respondent's submissions across every form by it. Rows go
-- with their submission. Submissions stored before this table existed are indexed by the
-- server in Go (their values are sealed), resuming from index_backfills. The hash is keyed per
-- workspace, so a row needs no workspace or form column (a lookup joins submissions, which has
-- them): a row is the hash and the submission ID, keyed by hash, plus the index on the
-- submission that deletes and ON DELETE CASCADE use. The capture path writes it in every group
-- commit, so it is kept this narrow.
--
-- The retention job deletes workflow runs with their submission and webhook deliveries by age,
-- so both get an index for that.

-- +goose Up
CREATE TABLE submission_email_index (
    hash          BYTEA NOT NULL,
    submission_id TEXT NOT NULL REFERENCES submissions (id) ON DELETE CASCADE,
    PRIMARY KEY (hash, submission_id)
);
CREATE INDEX submission_email_index_submission_idx ON submission_email_index (submission_id);

CREATE TABLE index_backfills (
    name     TEXT PRIMARY KEY,
    version  TEXT NOT NULL,
    after_id TEXT NOT NULL,
    done     BOOLEAN NOT NULL
);

CREATE INDEX runs_submission_idx ON runs (submission_id);
CREATE INDEX deliveries_form_created_idx ON deliveries (form_id, created_at);

-- +goose Down
DROP INDEX deliveries_form_created_idx;
DROP INDEX runs_submission_idx;
DROP TABLE index_backfills;
DROP TABLE submission_email_index;
