-- A form's submissions are indexed by time in ascending order (SQLite only; PostgreSQL keeps
-- its index as it is).
--
-- Captures arrive in time order. In the descending index each new entry went to the left end
-- of its form's range, where every full page splits in two and the left half is never filled
-- again: the index stayed half empty (8,340 pages for 200,000 submissions, 4,100 when full),
-- and a retention batch, which deletes a form's oldest entries side by side, dirtied twice the
-- pages. In ascending order new entries are appended at the right end and fill their pages.
-- SQLite reads an index in either direction: newest-first pages still use it without a sort.

-- +goose Up
DROP INDEX submissions_form_submitted_idx;
CREATE INDEX submissions_form_submitted_idx ON submissions (form_id, submitted_at, id);

-- +goose Down
DROP INDEX submissions_form_submitted_idx;
CREATE INDEX submissions_form_submitted_idx ON submissions (form_id, submitted_at DESC, id DESC);
