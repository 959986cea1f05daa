-- The blind index of the first email answer is kept in submission order rather than hash order
-- (SQLite only; PostgreSQL keeps its index by hash).
--
-- Ordered by hash, the index put every submission in a random place: each capture and, worse,
-- each deletion by the retention job dirtied an index page of its own (750 of the 900 pages a
-- batch of 1,000 deletions wrote), so a pass took SQLite's one writer four times as long as the
-- rows themselves needed. Ordered by submission ID (IDs sort by time), the entries of the
-- submissions a batch deletes, and those a group commit adds, lie side by side on a few pages.
-- A privacy lookup, rare and made by an admin, now reads this narrow index from end to end
-- (hash and ID only, about 70 bytes a submission: some 20 ms per 150,000 submissions) instead
-- of seeking; the query is unchanged, the planner picks the index because it covers the hash.

-- +goose Up
DROP INDEX submissions_email_hash_idx;
CREATE INDEX submissions_email_scan_idx ON submissions (id, email_hash) WHERE email_hash IS NOT NULL;

-- +goose Down
DROP INDEX submissions_email_scan_idx;
CREATE INDEX submissions_email_hash_idx ON submissions (email_hash) WHERE email_hash IS NOT NULL;
