-- +goose Up
-- A form's ref: the stable name forms as code use (PUT /v1/forms/by-ref/{ref}), unique in its
-- workspace; NULL for forms without one (NULLs never clash in a unique index).
ALTER TABLE forms ADD COLUMN ref TEXT;
CREATE UNIQUE INDEX forms_workspace_ref ON forms (workspace_id, ref);

-- +goose Down
DROP INDEX forms_workspace_ref;
ALTER TABLE forms DROP COLUMN ref;
