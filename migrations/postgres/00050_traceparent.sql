-- +goose Up
-- The W3C trace context (traceparent) of the request or event that made the row, so the relay,
-- the delivery attempts and the workflow actions continue its trace (docs/tracing.md). NULL
-- when tracing is off.
ALTER TABLE outbox ADD COLUMN traceparent TEXT;
ALTER TABLE deliveries ADD COLUMN traceparent TEXT;
ALTER TABLE runs ADD COLUMN traceparent TEXT;

-- +goose Down
ALTER TABLE runs DROP COLUMN traceparent;
ALTER TABLE deliveries DROP COLUMN traceparent;
ALTER TABLE outbox DROP COLUMN traceparent;
