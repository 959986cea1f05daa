-- +goose Up
-- When a workflow was last switched on (unix ms): events that happened earlier never start a
-- run, even when redelivered after the workflow was re-enabled.
ALTER TABLE workflows ADD COLUMN enabled_since BIGINT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE workflows DROP COLUMN enabled_since;
