-- +goose Up
-- The fair claim of due work walks the endpoints (deliveries) or workspaces (runs) that have
-- unfinished work and reads each one's first due rows, so its cost follows the number of
-- endpoints, not the size of a backlog.
CREATE INDEX deliveries_webhook_due_idx ON deliveries (webhook_id, next_attempt_at, id) WHERE status = 'pending';
CREATE INDEX runs_workspace_due_idx ON runs (workspace_id, next_attempt_at, id) WHERE status IN ('queued', 'running');

-- +goose Down
DROP INDEX runs_workspace_due_idx;
DROP INDEX deliveries_webhook_due_idx;
