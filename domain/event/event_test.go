package event_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
)

var t0 = time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)

func TestParseType(t *testing.T) {
	for _, s := range []string{"submission.created", "submission.updated", "form.published"} {
		if got, ok := event.ParseType(s); !ok || string(got) != s {
			t.Errorf("ParseType(%q) = %q, %v", s, got, ok)
		}
	}
	for _, s := range []string{"", "form.created", "submission.deleted", "Submission.Created"} {
		if _, ok := event.ParseType(s); ok {
			t.Errorf("ParseType(%q) ok", s)
		}
	}
}

func TestForSubmission(t *testing.T) {
	s := submission.UnmarshalFromDatabase("sub_1", "wsp_1", "frm_1", map[string]submission.Value{
		"fld_name":  submission.Single("Jane"),
		"fld_tags":  submission.List([]string{"a", "b"}),
		"fld_files": submission.List([]string{"https://x.example/f"}),
	}, submission.Metadata{Source: submission.SourceAPI}, t0, t0)
	at := time.Date(2024, 5, 1, 12, 30, 0, 123456789, time.FixedZone("X", 2*3600))
	for _, typ := range []event.Type{event.SubmissionCreated, event.SubmissionUpdated} {
		t.Run(string(typ), func(t *testing.T) {
			e := event.ForSubmission("evt_1", typ, s, at)
			if e.ID != "evt_1" || e.Type != typ || e.WorkspaceID != "wsp_1" || e.FormID != "frm_1" {
				t.Fatalf("event = %+v", e)
			}
			if !e.OccurredAt.Equal(at) || e.OccurredAt.Location() != time.UTC {
				t.Fatalf("occurredAt = %v", e.OccurredAt)
			}
			want := map[string]any{
				"submission_id": "sub_1",
				"fields": map[string]any{
					"fld_name":  "Jane",
					"fld_tags":  []string{"a", "b"},
					"fld_files": []string{"https://x.example/f"},
				},
			}
			if !reflect.DeepEqual(e.Data, want) {
				t.Fatalf("data = %#v, want %#v", e.Data, want)
			}
		})
	}
}

func TestForSubmissionEmpty(t *testing.T) {
	s := submission.UnmarshalFromDatabase("sub_1", "wsp_1", "frm_1", nil, submission.Metadata{Source: submission.SourceAPI}, t0, t0)
	e := event.ForSubmission("evt_1", event.SubmissionCreated, s, t0)
	fields, ok := e.Data["fields"].(map[string]any)
	if !ok || fields == nil || len(fields) != 0 {
		t.Fatalf("fields = %#v, want an empty object", e.Data["fields"])
	}
}

func TestPublished(t *testing.T) {
	f := form.UnmarshalWithSettingsFromDatabase("frm_1", "wsp_1", "Contact us", nil, form.StatusPublished, nil, form.DefaultSettings(), t0, t0)
	at := time.Date(2024, 5, 1, 12, 30, 5, 123456789, time.FixedZone("X", 2*3600))
	e := event.Published("evt_9", f, at)
	if e.ID != "evt_9" || e.Type != event.FormPublished || e.WorkspaceID != "wsp_1" || e.FormID != "frm_1" {
		t.Fatalf("event = %+v", e)
	}
	if !e.OccurredAt.Equal(at) || e.OccurredAt.Location() != time.UTC {
		t.Fatalf("occurredAt = %v", e.OccurredAt)
	}
	want := map[string]any{"name": "Contact us", "published_at": "2024-05-01T10:30:05.123Z"}
	if !reflect.DeepEqual(e.Data, want) {
		t.Fatalf("data = %#v, want %#v", e.Data, want)
	}
	if _, err := time.Parse(domain.TimeLayout, e.Data["published_at"].(string)); err != nil {
		t.Fatalf("published_at not in TimeLayout: %v", err)
	}
}

func TestFormatTime(t *testing.T) {
	tests := []struct {
		in   time.Time
		want string
	}{
		{time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC), "2024-01-02T03:04:05.000Z"},
		{time.Date(2024, 1, 2, 3, 4, 5, 999999999, time.UTC), "2024-01-02T03:04:05.999Z"},
		{time.Date(2024, 1, 2, 1, 0, 0, 0, time.FixedZone("X", 2*3600)), "2024-01-01T23:00:00.000Z"},
	}
	for _, tt := range tests {
		if got := domain.FormatTime(tt.in); got != tt.want {
			t.Errorf("FormatTime(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
