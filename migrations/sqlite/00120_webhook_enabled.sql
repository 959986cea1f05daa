-- +goose Up
-- A webhook can be switched off without deleting it: while enabled = 0 the fan-out creates no
-- delivery for it, so events that happen meanwhile are skipped for good. enabled_since (unix
-- ms, 0 when never switched off) is when it was last switched back on: events that happened
-- earlier are skipped too, even when a lagging worker hands them over later.
ALTER TABLE webhooks ADD COLUMN enabled INTEGER NOT NULL DEFAULT 1;
ALTER TABLE webhooks ADD COLUMN enabled_since BIGINT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE webhooks DROP COLUMN enabled_since;
ALTER TABLE webhooks DROP COLUMN enabled;
