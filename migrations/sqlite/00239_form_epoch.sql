-- +goose Up
-- form_epoch counts the writes of forms rows, whatever process or statement made them: the
-- triggers bump it in the writing transaction. A process keeps the forms rows it read tagged
-- with the count it read before them, and uses one only while the count is unchanged
-- (adapters/persistence/formcache.go): the public page and its post read the count, not the form.
CREATE TABLE form_epoch (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    n  INTEGER NOT NULL
);
INSERT INTO form_epoch (id, n) VALUES (1, 0);
-- +goose StatementBegin
CREATE TRIGGER forms_epoch_insert AFTER INSERT ON forms BEGIN UPDATE form_epoch SET n = n + 1 WHERE id = 1; END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER forms_epoch_update AFTER UPDATE ON forms BEGIN UPDATE form_epoch SET n = n + 1 WHERE id = 1; END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER forms_epoch_delete AFTER DELETE ON forms BEGIN UPDATE form_epoch SET n = n + 1 WHERE id = 1; END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER forms_epoch_delete;
DROP TRIGGER forms_epoch_update;
DROP TRIGGER forms_epoch_insert;
DROP TABLE form_epoch;
