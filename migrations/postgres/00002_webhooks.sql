-- Webhooks and their deliveries. The signing secret and the delivery body are sealed
-- (AES-256-GCM) with the workspace's data key; attempts hold no submitted values.

-- +goose Up
CREATE TABLE webhooks (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL,
    url          TEXT NOT NULL,
    events       TEXT NOT NULL,
    form_id      TEXT,
    secret       BYTEA,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL,
    -- deleting a form deletes the webhooks bound to it
    FOREIGN KEY (workspace_id, form_id) REFERENCES forms (workspace_id, id) ON DELETE CASCADE
);
CREATE INDEX webhooks_workspace_created_idx ON webhooks (workspace_id, created_at DESC, id DESC);
CREATE INDEX webhooks_form_idx ON webhooks (form_id) WHERE form_id IS NOT NULL;

CREATE TABLE deliveries (
    id              TEXT PRIMARY KEY,
    workspace_id    TEXT NOT NULL,
    -- deleting a webhook stops its deliveries, pending retries included
    webhook_id      TEXT NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    event_id        TEXT NOT NULL,
    event_type      TEXT NOT NULL,
    form_id         TEXT NOT NULL,
    body            BYTEA NOT NULL,
    status          TEXT NOT NULL,
    cycle           INTEGER NOT NULL,
    attempts        TEXT NOT NULL,
    next_attempt_at BIGINT,
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL,
    -- a redelivered event creates no second delivery
    UNIQUE (webhook_id, event_id)
);
CREATE INDEX deliveries_due_idx ON deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX deliveries_webhook_created_idx ON deliveries (webhook_id, created_at DESC, id DESC);

-- +goose Down
DROP TABLE deliveries;
DROP TABLE webhooks;
