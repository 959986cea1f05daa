-- +goose Up
-- Replays: re-delivering to one webhook every retained event of a time range. A job walks the
-- outbox rows of its range (seq_from..seq_to, found when it starts) in seq order; cursor is the
-- last seq it queued, written in the same transaction as the deliveries it queued, so a job
-- resumed after a restart never queues an event twice. At most one job runs per webhook.
CREATE TABLE webhook_replays (
    id            TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL,
    -- deleting a webhook deletes its replays
    webhook_id    TEXT NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    since         INTEGER NOT NULL,
    until         INTEGER NOT NULL,
    types         TEXT NOT NULL,
    status        TEXT NOT NULL,
    seq_from      INTEGER,
    seq_to        INTEGER,
    cursor        INTEGER NOT NULL DEFAULT 0,
    queued        INTEGER NOT NULL DEFAULT 0,
    events_total  INTEGER NOT NULL DEFAULT 0,
    events_sent   INTEGER NOT NULL DEFAULT 0,
    events_failed INTEGER NOT NULL DEFAULT 0,
    claimed_until INTEGER,
    error         TEXT,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL,
    finished_at   INTEGER
);
CREATE UNIQUE INDEX webhook_replays_active_idx ON webhook_replays (webhook_id) WHERE status IN ('queued', 'running');
CREATE INDEX webhook_replays_webhook_created_idx ON webhook_replays (webhook_id, created_at DESC, id DESC);
CREATE INDEX webhook_replays_open_idx ON webhook_replays (status) WHERE status IN ('queued', 'running');

-- The replay that last queued a delivery again (NULL for a delivery never replayed): its
-- attempts carry X-Service-Replay, and the job counts its progress from them.
ALTER TABLE deliveries ADD COLUMN replay_id TEXT;
CREATE INDEX deliveries_replay_idx ON deliveries (replay_id, status) WHERE replay_id IS NOT NULL;

-- +goose Down
DROP INDEX deliveries_replay_idx;
ALTER TABLE deliveries DROP COLUMN replay_id;
DROP TABLE webhook_replays;
