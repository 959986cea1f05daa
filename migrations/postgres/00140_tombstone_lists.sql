-- A tombstone row names one or more deleted things of one kind and workspace, deleted at the
-- same time: `ids` is a JSON array of their IDs.
--
-- A retention batch deletes up to 1,000 submissions and wrote a tombstone row for each; the
-- shipper then deleted them one by one. One row per batch costs a single insert and a single
-- delete. The tombstone log beside the backups is unchanged: it still holds one line per
-- deleted thing.

-- +goose Up
ALTER TABLE tombstones ADD COLUMN ids TEXT;
UPDATE tombstones SET ids = json_build_array(id)::text;
ALTER TABLE tombstones ALTER COLUMN ids SET NOT NULL;
ALTER TABLE tombstones DROP COLUMN id;

-- +goose Down
CREATE TABLE tombstones_old (
    seq          BIGSERIAL PRIMARY KEY,
    kind         TEXT NOT NULL,
    id           TEXT NOT NULL,
    workspace_id TEXT NOT NULL,
    deleted_at   BIGINT NOT NULL
);
INSERT INTO tombstones_old (kind, id, workspace_id, deleted_at)
    SELECT t.kind, j.value, t.workspace_id, t.deleted_at
    FROM tombstones t, json_array_elements_text(t.ids::json) WITH ORDINALITY AS j (value, n) ORDER BY t.seq, j.n;
DROP TABLE tombstones;
ALTER TABLE tombstones_old RENAME TO tombstones;
ALTER SEQUENCE tombstones_old_seq_seq RENAME TO tombstones_seq_seq;
ALTER INDEX tombstones_old_pkey RENAME TO tombstones_pkey;
