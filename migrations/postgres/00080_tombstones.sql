-- +goose Up
-- The database's own copy of every deletion (kind, ID, workspace, time; never content),
-- written in the deleting transaction. Rows are copied to the tombstone log beside the backups
-- and then removed, so a deletion can never be lost between the commit and the log.
CREATE TABLE tombstones (
    seq          BIGSERIAL PRIMARY KEY,
    kind         TEXT NOT NULL,
    id           TEXT NOT NULL,
    workspace_id TEXT NOT NULL,
    deleted_at   BIGINT NOT NULL
);

-- +goose Down
DROP TABLE tombstones;
