-- A tombstone row names one or more deleted things of one kind and workspace, deleted at the
-- same time: `ids` is a JSON array of their IDs.
--
-- A retention batch deletes up to 1,000 submissions and wrote a tombstone row for each, in the
-- transaction that holds the database's one writer; the shipper then deleted them one by one,
-- holding the writer again. One row per batch costs a single insert and a single delete. The
-- tombstone log beside the backups is unchanged: it still holds one line per deleted thing.

-- +goose Up
CREATE TABLE tombstones_new (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    kind         TEXT NOT NULL,
    ids          TEXT NOT NULL,
    workspace_id TEXT NOT NULL,
    deleted_at   INTEGER NOT NULL
);
INSERT INTO tombstones_new (seq, kind, ids, workspace_id, deleted_at)
    SELECT seq, kind, json_array(id), workspace_id, deleted_at FROM tombstones;
DROP TABLE tombstones;
ALTER TABLE tombstones_new RENAME TO tombstones;

-- +goose Down
CREATE TABLE tombstones_old (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    kind         TEXT NOT NULL,
    id           TEXT NOT NULL,
    workspace_id TEXT NOT NULL,
    deleted_at   INTEGER NOT NULL
);
INSERT INTO tombstones_old (kind, id, workspace_id, deleted_at)
    SELECT t.kind, j.value, t.workspace_id, t.deleted_at FROM tombstones t, json_each(t.ids) j ORDER BY t.seq, j.key;
DROP TABLE tombstones;
ALTER TABLE tombstones_old RENAME TO tombstones;
