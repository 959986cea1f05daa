package webhook

import (
	"encoding/json"
	"fmt"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/event"
)

// requestBody is the body of a registered webhook's request (docs/webhooks.md).
type requestBody struct {
	Event     string         `json:"event"`
	FormID    string         `json:"form_id"`
	Timestamp string         `json:"timestamp"`
	Data      map[string]any `json:"data"`
}

// EventBody encodes the webhook request body (docs/webhooks.md) for e: event, form_id,
// timestamp (the time of the event) and the event-specific data. It is a function of the
// event alone, so a delivery of a stored event rebuilds the same bytes at every attempt.
func EventBody(e event.Event) ([]byte, error) {
	data := map[string]any{}
	switch e.Type {
	case event.SubmissionCreated, event.SubmissionUpdated:
		fields := e.Data["fields"]
		if fields == nil {
			fields = map[string]any{}
		}
		data["submission_id"] = e.Data["submission_id"]
		data["fields"] = fields
		if l, ok := e.Data["language"]; ok {
			data["language"] = l
		}
		if sc, ok := e.Data["score"]; ok {
			data["score"] = sc
		}
	case event.FormPublished:
		data["name"] = e.Data["name"]
		published := e.Data["published_at"]
		if published == nil {
			published = domain.FormatTime(e.OccurredAt)
		}
		data["published_at"] = published
	default:
		for k, v := range e.Data {
			data[k] = v
		}
	}
	b, err := json.Marshal(requestBody{Event: string(e.Type), FormID: e.FormID, Timestamp: domain.FormatTime(e.OccurredAt), Data: data})
	if err != nil {
		return nil, fmt.Errorf("encode delivery body of %s: %w", e.ID, err)
	}
	return b, nil
}
