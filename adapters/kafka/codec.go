// Package kafka carries the outbox's events over Kafka (segmentio/kafka-go): a publisher for the
// relay and a consumer-group subscriber for the workers. The wire format is documented
// for downstream teams in docs/events.md: key = form ID, value = the event as JSON, CloudEvents
// binary-mode headers.
package kafka

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	kafkago "github.com/segmentio/kafka-go"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/event"
)

// CloudEvents Kafka protocol binding, binary content mode: the attributes travel as ce_ headers,
// the value is the data's own content type.
const (
	headerID          = "ce_id"
	headerType        = "ce_type"
	headerSource      = "ce_source"
	headerSpecVersion = "ce_specversion"
	headerTime        = "ce_time"
	headerDataSchema  = "ce_dataschema"
	headerContentType = "content-type"

	specVersion = "1.0"
	contentType = "application/json"
)

// wireEvent is the JSON value of a message, the schema downstream teams rely on.
type wireEvent struct {
	ID          string `json:"id"`
	Type        string `json:"type"`
	WorkspaceID string `json:"workspace_id"`
	FormID      string `json:"form_id"`
	OccurredAt  string `json:"occurred_at"`
	// FormVersion is the version of the form a submission's event answered; absent otherwise.
	FormVersion int            `json:"form_version,omitempty"`
	Data        map[string]any `json:"data"`
}

// Source is the CloudEvents source of an event: the form it happened on.
func Source(workspaceID, formID string) string {
	return "/formward/workspaces/" + url.PathEscape(workspaceID) + "/forms/" + url.PathEscape(formID)
}

// Encode turns e into a message keyed by its form ID, so all events of a form land on one
// partition in order. The Topic is left empty: the Writer names it. It fails only when Data
// holds something JSON cannot carry, which event.Event rules out.
func Encode(e event.Event) (kafkago.Message, error) { return EncodeWithSchema(e, "") }

// DataSchema is the URL of the JSON Schema of a submission event's data for its form version:
// <public URL>/v1/forms/{id}/versions/{n}/schema.
func DataSchema(publicURL, formID string, version int) string {
	return strings.TrimRight(publicURL, "/") + "/v1/forms/" + url.PathEscape(formID) + "/versions/" + strconv.Itoa(version) + "/schema"
}

// EncodeWithSchema is Encode with the ce_dataschema header on events that carry a form version,
// pointing at publicURL's schema of that version (no header when publicURL is empty).
func EncodeWithSchema(e event.Event, publicURL string) (kafkago.Message, error) {
	data := e.Data
	if data == nil {
		data = map[string]any{} // consumers always get an object
	}
	at := domain.FormatTime(e.OccurredAt)
	value, err := json.Marshal(wireEvent{
		ID: e.ID, Type: string(e.Type), WorkspaceID: e.WorkspaceID, FormID: e.FormID,
		OccurredAt: at, FormVersion: e.FormVersion, Data: data,
	})
	if err != nil {
		return kafkago.Message{}, fmt.Errorf("encode event %s: %w", e.ID, err)
	}
	m := kafkago.Message{
		Key:   []byte(e.FormID),
		Value: value,
		Headers: []kafkago.Header{
			{Key: headerID, Value: []byte(e.ID)},
			{Key: headerType, Value: []byte(e.Type)},
			{Key: headerSource, Value: []byte(Source(e.WorkspaceID, e.FormID))},
			{Key: headerSpecVersion, Value: []byte(specVersion)},
			{Key: headerTime, Value: []byte(at)},
			{Key: headerContentType, Value: []byte(contentType)},
		},
	}
	if e.FormVersion > 0 && publicURL != "" {
		m.Headers = append(m.Headers, kafkago.Header{Key: headerDataSchema, Value: []byte(DataSchema(publicURL, e.FormID, e.FormVersion))})
	}
	return m, nil
}

// Decode reads an event back from a message value. The value is authoritative; the headers only
// repeat it for routing without parsing. OccurredAt comes back at millisecond precision, in UTC.
func Decode(m kafkago.Message) (event.Event, error) {
	var w wireEvent
	if err := json.Unmarshal(m.Value, &w); err != nil {
		return event.Event{}, fmt.Errorf("decode event: %w", err)
	}
	if w.ID == "" || w.FormID == "" {
		return event.Event{}, errors.New("decode event: missing id or form_id")
	}
	t, ok := event.ParseType(w.Type)
	if !ok {
		return event.Event{}, fmt.Errorf("decode event %s: unknown type %q", w.ID, w.Type)
	}
	at, err := time.Parse(time.RFC3339Nano, w.OccurredAt)
	if err != nil {
		return event.Event{}, fmt.Errorf("decode event %s: occurred_at: %w", w.ID, err)
	}
	return event.Event{
		ID: w.ID, Type: t, WorkspaceID: w.WorkspaceID, FormID: w.FormID, OccurredAt: at.UTC(),
		Data: restoreStrings(w.Data), FormVersion: w.FormVersion,
	}, nil
}

// restoreStrings gives back the shapes event.Event.Data promises: JSON arrays of strings decode
// as []any, and become []string again.
func restoreStrings(m map[string]any) map[string]any {
	for k, v := range m {
		m[k] = restoreValue(v)
	}
	return m
}

func restoreValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		return restoreStrings(v)
	case []any:
		ss := make([]string, len(v))
		for i, x := range v {
			s, ok := x.(string)
			if !ok {
				for j := range v {
					v[j] = restoreValue(v[j])
				}
				return v
			}
			ss[i] = s
		}
		return ss
	}
	return v
}
