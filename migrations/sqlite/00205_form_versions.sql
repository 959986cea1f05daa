-- +goose Up
-- A form's version: 1 at creation, one more at every change to its fields. Each version's
-- fields are kept, immutable, in form_versions (created_by is the actor as in audit events,
-- JSON; empty for the versions this migration fills). A submission records the version of the
-- form it answered.
ALTER TABLE forms ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
CREATE TABLE form_versions (
    form_id    TEXT NOT NULL REFERENCES forms (id) ON DELETE CASCADE,
    version    INTEGER NOT NULL,
    fields     TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    created_by TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (form_id, version)
);
INSERT INTO form_versions (form_id, version, fields, created_at, created_by)
    SELECT id, 1, fields, updated_at, '' FROM forms;
ALTER TABLE submissions ADD COLUMN form_version INTEGER NOT NULL DEFAULT 1;
-- The form version of a submission's event, for the event's consumers; NULL for other events.
ALTER TABLE outbox ADD COLUMN form_version INTEGER;
ALTER TABLE deliveries ADD COLUMN form_version INTEGER;

-- +goose Down
ALTER TABLE outbox DROP COLUMN form_version;
ALTER TABLE deliveries DROP COLUMN form_version;
ALTER TABLE submissions DROP COLUMN form_version;
DROP TABLE form_versions;
ALTER TABLE forms DROP COLUMN version;
