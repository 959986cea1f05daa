-- +goose Up
-- The public form settings (JSON; the captcha secret inside is sealed). Empty means the defaults.
ALTER TABLE forms ADD COLUMN settings TEXT NOT NULL DEFAULT '';

-- Nonces of the public form's render tokens already used, kept until the token expires, so a
-- token cannot be replayed on any process.
CREATE TABLE used_form_tokens (
    nonce      TEXT PRIMARY KEY,
    expires_at BIGINT NOT NULL
);
CREATE INDEX used_form_tokens_expires_idx ON used_form_tokens (expires_at);

-- +goose Down
DROP TABLE used_form_tokens;
ALTER TABLE forms DROP COLUMN settings;
