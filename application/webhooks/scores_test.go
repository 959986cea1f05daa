package webhooks_test

import (
	"testing"
	"time"

	"github.com/formward/formward/application/webhooks"
	"github.com/formward/formward/domain/event"
)

// A scored submission's webhook body carries data.score.
func TestDeliveryBodyScore(t *testing.T) {
	at := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	b, err := webhooks.DeliveryBody(event.Event{ID: "evt_1", Type: event.SubmissionCreated, WorkspaceID: "wsp_1", FormID: "frm_1", OccurredAt: at,
		Data: map[string]any{"submission_id": "sub_1", "fields": map[string]any{"f1": "a"}, "score": 1.5}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"event":"submission.created","form_id":"frm_1","timestamp":"2024-05-01T10:00:00.000Z","data":{"fields":{"f1":"a"},"score":1.5,"submission_id":"sub_1"}}`
	if string(b) != want {
		t.Fatalf("body = %s\nwant   %s", b, want)
	}
}
