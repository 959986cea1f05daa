-- Notification runs: a form's owner notification and respondent confirmation run on the
-- workflow run engine, so a run now has a kind (workflow, owner, respondent) and a workflow
-- only when its kind is workflow. A notification run is unique per form, event and kind, so a
-- redelivered event never sends twice.

-- +goose Up
ALTER TABLE runs ADD COLUMN kind TEXT NOT NULL DEFAULT 'workflow';
ALTER TABLE runs ALTER COLUMN workflow_id DROP NOT NULL;
ALTER TABLE runs ADD CONSTRAINT runs_kind_workflow_check CHECK ((kind = 'workflow') = (workflow_id IS NOT NULL));
CREATE UNIQUE INDEX runs_notification_event_idx ON runs (form_id, event_id, kind) WHERE workflow_id IS NULL;
CREATE INDEX runs_notification_created_idx ON runs (form_id, created_at DESC, id DESC) WHERE workflow_id IS NULL;

-- +goose Down
DROP INDEX runs_notification_created_idx;
DROP INDEX runs_notification_event_idx;
DELETE FROM runs WHERE workflow_id IS NULL;
ALTER TABLE runs DROP CONSTRAINT runs_kind_workflow_check;
ALTER TABLE runs ALTER COLUMN workflow_id SET NOT NULL;
ALTER TABLE runs DROP COLUMN kind;
