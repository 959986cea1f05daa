-- +goose Up
-- SQLite's form_epoch (its 00239) has no PostgreSQL counterpart: on PostgreSQL every process
-- reads the form itself (a capture with the caller's key, in one round trip). This keeps the two
-- dialects' versions in step.
SELECT 1;

-- +goose Down
SELECT 1;
