-- The first email answer's blind index moves into the submission's own row.
--
-- Nearly every form has at most one email field, and writing its hash as a row of
-- submission_email_index cost the capture path a second insert in every group commit (two
-- index entries and a foreign-key check per submission). submissions.email_hash now holds the
-- keyed hash of the first email answer; submission_email_index keeps only the further ones
-- (a form with several email fields). A privacy lookup reads both. The partial index leaves
-- submissions without an email answer out of it.

-- +goose Up
ALTER TABLE submissions ADD COLUMN email_hash BLOB;
UPDATE submissions SET email_hash = (
    SELECT i.hash FROM submission_email_index i WHERE i.submission_id = submissions.id ORDER BY i.hash LIMIT 1)
WHERE id IN (SELECT submission_id FROM submission_email_index);
DELETE FROM submission_email_index WHERE EXISTS (
    SELECT 1 FROM submissions s WHERE s.id = submission_email_index.submission_id AND s.email_hash = submission_email_index.hash);
CREATE INDEX submissions_email_hash_idx ON submissions (email_hash) WHERE email_hash IS NOT NULL;

-- +goose Down
INSERT INTO submission_email_index (hash, submission_id)
    SELECT email_hash, id FROM submissions WHERE email_hash IS NOT NULL
    ON CONFLICT (hash, submission_id) DO NOTHING;
DROP INDEX submissions_email_hash_idx;
ALTER TABLE submissions DROP COLUMN email_hash;
