package kafka

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/formward/formward/domain/event"
)

// A submission event carries form_version in the value and ce_dataschema pointing at that
// version's schema under the public URL; other events carry neither, and the version survives
// decoding.
func TestEncodeFormVersionAndDataSchema(t *testing.T) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	sub := event.Event{ID: "evt_1", Type: event.SubmissionCreated, WorkspaceID: "ws_1", FormID: "frm_1", OccurredAt: at,
		Data: map[string]any{"submission_id": "sub_1"}, FormVersion: 3}
	m, err := EncodeWithSchema(sub, "https://forms.example.com/")
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(m.Value, &v); err != nil {
		t.Fatal(err)
	}
	if v["form_version"] != float64(3) {
		t.Errorf("value form_version = %v, want 3", v["form_version"])
	}
	if got := headers(m)[headerDataSchema]; got != "https://forms.example.com/v1/forms/frm_1/versions/3/schema" {
		t.Errorf("ce_dataschema = %q", got)
	}
	back, err := Decode(m)
	if err != nil || back.FormVersion != 3 {
		t.Fatalf("decoded form version = %d, %v", back.FormVersion, err)
	}

	other := event.Event{ID: "evt_2", Type: event.FormPublished, WorkspaceID: "ws_1", FormID: "frm_1", OccurredAt: at, Data: map[string]any{}}
	m, err = EncodeWithSchema(other, "https://forms.example.com")
	if err != nil {
		t.Fatal(err)
	}
	v = nil
	if err := json.Unmarshal(m.Value, &v); err != nil {
		t.Fatal(err)
	}
	if _, ok := v["form_version"]; ok || headers(m)[headerDataSchema] != "" {
		t.Errorf("form.published carries form_version %v or ce_dataschema %q", v["form_version"], headers(m)[headerDataSchema])
	}
}

// Over a broker: the publisher with a public URL sends ce_dataschema and form_version for a
// submission event.
func TestPublishCarriesDataSchema(t *testing.T) {
	const topic = "formward.versions.test"
	brokers := newCluster(t, topic, 1)
	pub := NewPublisher(PublisherConfig{Brokers: brokers, Topic: topic, PublicURL: "https://forms.example.com"})
	t.Cleanup(func() { _ = pub.Close() })
	e := testEvents(1, 1)[0]
	e.FormVersion = 2
	if err := pub.Publish(context.Background(), []event.Event{e}); err != nil {
		t.Fatal(err)
	}
	m := readRaw(t, brokers, topic, 1, 1)[0]
	if got := headers(m)[headerDataSchema]; got != "https://forms.example.com/v1/forms/"+e.FormID+"/versions/2/schema" {
		t.Errorf("ce_dataschema = %q", got)
	}
	back, err := Decode(m)
	if err != nil || back.FormVersion != 2 {
		t.Fatalf("decoded form version = %d, %v", back.FormVersion, err)
	}
}
