package kafka

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	kafkago "github.com/segmentio/kafka-go"

	"github.com/formward/formward/domain/event"
)

func TestEncodeDecodeRoundTrip(t *testing.T) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 891_234_567, time.FixedZone("CET", 3600))
	e := event.Event{
		ID: "evt_1", Type: event.SubmissionCreated, WorkspaceID: "ws_1", FormID: "frm_1", OccurredAt: at,
		Data: map[string]any{
			"submission_id": "sub_1",
			"fields":        map[string]any{"name": "Ada", "tags": []string{"a", "b"}, "none": []string{}},
		},
	}
	m, err := Encode(e)
	if err != nil {
		t.Fatal(err)
	}
	if string(m.Key) != "frm_1" || m.Topic != "" {
		t.Errorf("key %q topic %q, want frm_1 and no topic", m.Key, m.Topic)
	}
	wantHeaders := map[string]string{
		"ce_id": "evt_1", "ce_type": "submission.created", "ce_source": "/formward/workspaces/ws_1/forms/frm_1",
		"ce_specversion": "1.0", "ce_time": "2026-03-04T04:06:07.891Z", "content-type": "application/json",
	}
	if got := headers(m); !reflect.DeepEqual(got, wantHeaders) {
		t.Errorf("headers %v, want %v", got, wantHeaders)
	}
	var value map[string]any
	if err := json.Unmarshal(m.Value, &value); err != nil {
		t.Fatal(err)
	}
	wantValue := map[string]any{
		"id": "evt_1", "type": "submission.created", "workspace_id": "ws_1", "form_id": "frm_1",
		"occurred_at": "2026-03-04T04:06:07.891Z",
		"data": map[string]any{
			"submission_id": "sub_1",
			"fields":        map[string]any{"name": "Ada", "tags": []any{"a", "b"}, "none": []any{}},
		},
	}
	if !reflect.DeepEqual(value, wantValue) {
		t.Errorf("value %s", m.Value)
	}

	got, err := Decode(m)
	if err != nil {
		t.Fatal(err)
	}
	want := e
	want.OccurredAt = at.UTC().Truncate(time.Millisecond)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("decoded %#v\nwant %#v", got, want)
	}
	if got.OccurredAt.Location() != time.UTC {
		t.Errorf("occurred_at location %v, want UTC", got.OccurredAt.Location())
	}
}

func TestEncodeNilDataIsAnObject(t *testing.T) {
	m, err := Encode(event.Event{ID: "e", Type: event.FormPublished, FormID: "f", OccurredAt: time.Unix(0, 0)})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(m.Value), `"data":{}`) {
		t.Errorf("value %s, want data {}", m.Value)
	}
}

func TestDecodeRejects(t *testing.T) {
	for name, value := range map[string]string{
		"not json":     `not json`,
		"no id":        `{"type":"form.published","form_id":"f","occurred_at":"2026-01-01T00:00:00.000Z","data":{}}`,
		"no form":      `{"id":"e","type":"form.published","occurred_at":"2026-01-01T00:00:00.000Z","data":{}}`,
		"unknown type": `{"id":"e","type":"form.deleted","form_id":"f","occurred_at":"2026-01-01T00:00:00.000Z","data":{}}`,
		"bad time":     `{"id":"e","type":"form.published","form_id":"f","occurred_at":"yesterday","data":{}}`,
	} {
		if _, err := Decode(kafkago.Message{Value: []byte(value)}); err == nil {
			t.Errorf("%s: decoded without error", name)
		}
	}
}

func headers(m kafkago.Message) map[string]string {
	h := make(map[string]string, len(m.Headers))
	for _, x := range m.Headers {
		h[x.Key] = string(x.Value)
	}
	return h
}
