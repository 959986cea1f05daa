-- +goose Up
-- The submission an outbox event is about (submission.created, submission.updated; NULL for
-- other events and for events written before this column): deleting, retaining away or
-- erasing a submission empties the payload of its events in the same transaction, so neither
-- the retained published rows nor a later replay keep a copy of its answers.
ALTER TABLE outbox ADD COLUMN submission_id TEXT;
CREATE INDEX outbox_submission_idx ON outbox (submission_id) WHERE submission_id IS NOT NULL;

-- +goose Down
DROP INDEX outbox_submission_idx;
ALTER TABLE outbox DROP COLUMN submission_id;
