-- +goose Up
-- How each form's public page performs, per UTC day (day: midnight UTC in unix milliseconds).
-- The counts are kept in memory by each process and added here every few seconds; nothing in
-- these tables names a respondent (no IP, no cookie, no answer).
CREATE TABLE form_stats_daily (
    form_id     TEXT NOT NULL REFERENCES forms (id) ON DELETE CASCADE,
    day         BIGINT NOT NULL,
    views       BIGINT NOT NULL DEFAULT 0,
    starts      BIGINT NOT NULL DEFAULT 0,
    submissions BIGINT NOT NULL DEFAULT 0,
    -- completions: the submissions that came from a rendered page, whose fill time is known
    completions BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (form_id, day)
);

-- The fill-time histogram of the completions: how many took at most bucket_seconds (and more
-- than the bucket below). The median time to complete is read from it.
CREATE TABLE form_fill_times_daily (
    form_id        TEXT NOT NULL REFERENCES forms (id) ON DELETE CASCADE,
    day            BIGINT NOT NULL,
    bucket_seconds INTEGER NOT NULL,
    completions    BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (form_id, day, bucket_seconds)
);

-- +goose Down
DROP TABLE form_fill_times_daily;
DROP TABLE form_stats_daily;
