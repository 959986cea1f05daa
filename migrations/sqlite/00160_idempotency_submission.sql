-- An Idempotency-Key's row names the submission its request created, so that deleting the
-- submission (through the API or the dashboard, by retention, a privacy erasure, or with its
-- form or workspace) deletes the stored response, which holds its answers, in the same
-- transaction. The key and the request's fingerprint stay: a replay then gets 409 `conflict`.
-- Rows stored before this migration keep NULL (their responses are sealed, so SQL cannot read
-- which submission they name); the retention job deletes them 24 hours after they were stored. The partial index
-- serves the deletions, which look keys up by the IDs they delete within one workspace.

-- +goose Up
ALTER TABLE idempotency_keys ADD COLUMN submission_id TEXT;
CREATE INDEX idempotency_keys_submission_idx ON idempotency_keys (workspace_id, submission_id) WHERE submission_id IS NOT NULL;

-- +goose Down
DROP INDEX idempotency_keys_submission_idx;
ALTER TABLE idempotency_keys DROP COLUMN submission_id;
