-- +goose Up
-- One-time flashes: what a dashboard page shows once after the post that made it (a new API
-- key, an invitation link, recovery codes), sealed by the application, bound to the session
-- and the page, deleted when read and purged by the retention job once expired.
CREATE TABLE flashes (
    id         TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    kind       TEXT NOT NULL,
    sealed     BLOB NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);
CREATE INDEX flashes_expires_at_idx ON flashes (expires_at);

-- +goose Down
DROP TABLE flashes;
