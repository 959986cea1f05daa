-- +goose Up
-- The columns of a form's responses table as each person chose them: the field IDs shown, in
-- their order, and those hidden (JSON arrays). A field in neither list was added to the form
-- later and is shown after the others. Deleting the form deletes the choices made for it.
CREATE TABLE response_columns (
    user_id      TEXT NOT NULL,
    form_id      TEXT NOT NULL,
    workspace_id TEXT NOT NULL,
    shown        TEXT NOT NULL,
    hidden       TEXT NOT NULL,
    updated_at   BIGINT NOT NULL,
    PRIMARY KEY (user_id, form_id),
    FOREIGN KEY (workspace_id, form_id) REFERENCES forms (workspace_id, id) ON DELETE CASCADE
);
CREATE INDEX response_columns_form_idx ON response_columns (workspace_id, form_id);

-- +goose Down
DROP TABLE response_columns;
