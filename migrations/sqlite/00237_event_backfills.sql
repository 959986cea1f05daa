-- +goose Up
-- Progress of `formward events backfill`: the form being published and the last submission
-- published of it, written after the broker acknowledged each batch, so an interrupted backfill
-- resumes after it. At most one runs per topic and scope (a form ID, or "all").
CREATE TABLE event_backfills (
    id          TEXT PRIMARY KEY,
    topic       TEXT NOT NULL,
    scope       TEXT NOT NULL,
    form_id     TEXT,
    after_at    INTEGER,
    after_id    TEXT,
    published   INTEGER NOT NULL DEFAULT 0,
    status      TEXT NOT NULL,
    started_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    finished_at INTEGER
);
CREATE UNIQUE INDEX event_backfills_running_idx ON event_backfills (topic, scope) WHERE status = 'running';

-- +goose Down
DROP TABLE event_backfills;
