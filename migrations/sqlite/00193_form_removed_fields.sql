-- +goose Up
-- The fields removed from a form (JSON list of id, key, label, type, removed_at): their stored
-- answers stay in the submissions, and these name them in the responses pages and exports.
-- Empty means none.
ALTER TABLE forms ADD COLUMN removed_fields TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE forms DROP COLUMN removed_fields;
