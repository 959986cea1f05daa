-- +goose Up
-- A sign-in attempt takes its place in the failure count before its password is checked and
-- gives it back when the password was right: attempt_id names the places of one attempt
-- (NULL for rows written before, which are never given back).
ALTER TABLE sign_in_failures ADD COLUMN attempt_id TEXT;
CREATE INDEX sign_in_failures_attempt_idx ON sign_in_failures (attempt_id) WHERE attempt_id IS NOT NULL;

-- The account mail outbox: mail a request asked for (a password link), sent after the request
-- was answered and retried until sent. payload is sealed under the accounts key; a claimed
-- row's next_attempt_at moves past its lease, so two senders never take the same row at once.
CREATE TABLE account_mail (
    id              TEXT PRIMARY KEY,
    kind            TEXT NOT NULL,
    payload         BYTEA NOT NULL,
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at BIGINT NOT NULL,
    created_at      BIGINT NOT NULL
);
CREATE INDEX account_mail_due_idx ON account_mail (next_attempt_at, id);

-- +goose Down
DROP TABLE account_mail;
DROP INDEX sign_in_failures_attempt_idx;
ALTER TABLE sign_in_failures DROP COLUMN attempt_id;
