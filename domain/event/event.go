// Package event defines the domain events that the outbox carries to Kafka and webhooks.
package event

import (
	"time"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
)

// Type names an event as subscribers see it.
type Type string

// The three event types a webhook may subscribe to (docs/events.md).
const (
	SubmissionCreated Type = "submission.created"
	SubmissionUpdated Type = "submission.updated"
	FormPublished     Type = "form.published"
)

// SubmissionSnapshot is a stored submission as it is now, published by a backfill for
// consumers that join late (docs/events.md); its data is that of submission.created. Webhooks
// cannot subscribe to it.
const SubmissionSnapshot Type = "submission.snapshot"

// ParseType accepts one of the three event type names.
func ParseType(s string) (Type, bool) {
	switch t := Type(s); t {
	case SubmissionCreated, SubmissionUpdated, FormPublished:
		return t, true
	}
	return "", false
}

// Event is one fact, written to the outbox in the transaction that made it true.
// Data holds only strings, lists of strings and nested maps of those, so any adapter can encode it.
type Event struct {
	ID          string
	Type        Type
	WorkspaceID string
	FormID      string
	OccurredAt  time.Time
	Data        map[string]any
	// TraceParent is the W3C trace context of the operation that caused the event ("" when
	// not traced). The domain never reads it; the outbox, the transports and the delivery and
	// run rows carry it so one trace follows a submission to its webhooks and actions.
	TraceParent string
	// FormVersion is the version of the form a submission's event is about; 0 for other events.
	FormVersion int
	// SubmissionID is the submission a submission's event is about; "" for other events. The
	// outbox keeps it beside the sealed payload, so a deletion can empty the payload.
	SubmissionID string
}

// ForSubmission builds submission.created or submission.updated for s.
func ForSubmission(id string, t Type, s *submission.Submission, at time.Time) Event {
	fields := make(map[string]any, len(s.Data()))
	for k, v := range s.Data() {
		if v.IsList() {
			fields[k] = v.Strings()
		} else {
			fields[k] = v.String()
		}
	}
	data := map[string]any{"submission_id": s.ID(), "fields": fields}
	if sc := s.Metadata().Score; sc != nil {
		data["score"] = *sc // forms with scores only: other events stay as they were
	}
	e := Event{
		ID: id, Type: t, WorkspaceID: s.WorkspaceID(), FormID: s.FormID(), OccurredAt: at.UTC(),
		Data: data, FormVersion: s.FormVersion(), SubmissionID: s.ID(),
	}
	if l := s.Metadata().Language; l != nil { // a form with languages: the page's language
		e.Data["language"] = *l
	}
	return e
}

// Published builds form.published for f.
func Published(id string, f *form.Form, at time.Time) Event {
	at = at.UTC()
	return Event{
		ID: id, Type: FormPublished, WorkspaceID: f.WorkspaceID(), FormID: f.ID(), OccurredAt: at,
		Data: map[string]any{"name": f.Name(), "published_at": domain.FormatTime(at)},
	}
}

// WebhookTest is the event a person sends to one webhook from the dashboard to try it. It is
// delivered only on request, to that webhook, and cannot be subscribed to.
const WebhookTest Type = "webhook.test"
