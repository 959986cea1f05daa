-- +goose Up
-- One response per email answer (settings.closing.one_per_email_field): each stored response
-- of such a form leaves a keyed hash of its email answer here, never the address itself. The
-- primary key makes a second response with the same answer fail inside the capture's own
-- transaction; deleting the response (or the form) frees the address again.
CREATE TABLE form_email_keys (
    form_id       TEXT NOT NULL,
    email_key     TEXT NOT NULL,
    submission_id TEXT NOT NULL REFERENCES submissions (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
    PRIMARY KEY (form_id, email_key)
);
CREATE INDEX form_email_keys_submission_idx ON form_email_keys (submission_id);

-- +goose Down
DROP TABLE form_email_keys;
