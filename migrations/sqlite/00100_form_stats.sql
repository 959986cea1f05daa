-- +goose Up
-- How each form's public page performs, per UTC day (day: midnight UTC in unix milliseconds).
-- The counts are kept in memory by each process and added here every few seconds; nothing in
-- these tables names a respondent (no IP, no cookie, no answer).
CREATE TABLE form_stats_daily (
    form_id     TEXT NOT NULL REFERENCES forms (id) ON DELETE CASCADE,
    day         INTEGER NOT NULL,
    views       INTEGER NOT NULL DEFAULT 0,
    starts      INTEGER NOT NULL DEFAULT 0,
    submissions INTEGER NOT NULL DEFAULT 0,
    -- completions: the submissions that came from a rendered page, whose fill time is known
    completions INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (form_id, day)
);

-- The fill-time histogram of the completions: how many took at most bucket_seconds (and more
-- than the bucket below). The median time to complete is read from it.
CREATE TABLE form_fill_times_daily (
    form_id        TEXT NOT NULL REFERENCES forms (id) ON DELETE CASCADE,
    day            INTEGER NOT NULL,
    bucket_seconds INTEGER NOT NULL,
    completions    INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (form_id, day, bucket_seconds)
);

-- +goose Down
DROP TABLE form_fill_times_daily;
DROP TABLE form_stats_daily;
