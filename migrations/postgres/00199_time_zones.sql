-- +goose Up
-- Time zones the dashboard shows times in: the workspace's (an IANA name, UTC unless changed)
-- and each person's own, empty until they choose one (their times then follow the workspace).
ALTER TABLE workspaces ADD COLUMN time_zone TEXT NOT NULL DEFAULT 'UTC';
ALTER TABLE users ADD COLUMN time_zone TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE users DROP COLUMN time_zone;
ALTER TABLE workspaces DROP COLUMN time_zone;
