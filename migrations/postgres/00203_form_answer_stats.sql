-- +goose Up
-- Submissions split by where they came from (the public page or a form-backend post: form;
-- the API: api). Days counted before the split count their submissions from a rendered page
-- (completions) as form ones and the rest as API ones.
ALTER TABLE form_stats_daily ADD COLUMN form_submissions BIGINT NOT NULL DEFAULT 0;
ALTER TABLE form_stats_daily ADD COLUMN api_submissions BIGINT NOT NULL DEFAULT 0;
UPDATE form_stats_daily SET form_submissions = completions, api_submissions = submissions - completions;

-- Per question, per UTC day (day: midnight UTC in unix milliseconds): how many submissions
-- answered each field (kind 'answered', value ''), chose each option of a choice field (kind
-- 'option', value: the option) and gave each value of a number field (kind 'number', value:
-- the number as text). Counted at capture from the answers before they are sealed, in memory,
-- and added here with the day's other counts: reading them never decrypts a submission.
CREATE TABLE form_answer_stats_daily (
    form_id  TEXT NOT NULL REFERENCES forms (id) ON DELETE CASCADE,
    day      BIGINT NOT NULL,
    field_id TEXT NOT NULL,
    kind     TEXT NOT NULL,
    value    TEXT NOT NULL,
    count    BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (form_id, day, field_id, kind, value)
);

-- How many visits reached each page of a multi-page form, per UTC day.
CREATE TABLE form_page_stats_daily (
    form_id TEXT NOT NULL REFERENCES forms (id) ON DELETE CASCADE,
    day     BIGINT NOT NULL,
    page    INTEGER NOT NULL,
    reached BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (form_id, day, page)
);

-- +goose Down
DROP TABLE form_page_stats_daily;
DROP TABLE form_answer_stats_daily;
ALTER TABLE form_stats_daily DROP COLUMN api_submissions;
ALTER TABLE form_stats_daily DROP COLUMN form_submissions;
