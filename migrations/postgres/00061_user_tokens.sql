-- +goose Up
-- One-time tokens for people: the setup token of the first owner (no user yet), password links,
-- and a TOTP secret waiting for its first code. Only the hash of a token is kept.
CREATE TABLE user_tokens (
    token_hash BYTEA PRIMARY KEY,
    purpose    TEXT NOT NULL,
    user_id    TEXT NOT NULL DEFAULT '',
    data       BYTEA,
    expires_at BIGINT NOT NULL
);
CREATE INDEX user_tokens_user_idx ON user_tokens (purpose, user_id);

-- +goose Down
DROP TABLE user_tokens;
