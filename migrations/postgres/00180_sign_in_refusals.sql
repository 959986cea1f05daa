-- +goose Up
-- The last time an attempt was refused because a subject's failure count was full. A right
-- password whose place was taken before such a refusal was checked while a burst filled the
-- count, so it is refused too instead of giving its place back.
CREATE TABLE sign_in_refusals (
    subject TEXT PRIMARY KEY,
    at      BIGINT NOT NULL
);
CREATE INDEX sign_in_refusals_at_idx ON sign_in_refusals (at);

-- +goose Down
DROP TABLE sign_in_refusals;
