package submission_test

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
)

var (
	t0 = time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	t1 = time.Date(2024, 5, 2, 11, 30, 0, 0, time.UTC)
)

func testFields() []form.Field {
	return []form.Field{
		{ID: "fld_name", Label: "Name", Type: form.TypeText, Required: true},
		{ID: "fld_note", Label: "Note", Type: form.TypeTextarea},
		{ID: "fld_age", Label: "Age", Type: form.TypeNumber},
		{ID: "fld_tags", Label: "Tags", Type: form.TypeCheckbox, Options: []string{"a", "b", "c"}},
	}
}

func formWith(status form.Status, fields []form.Field) *form.Form {
	return form.UnmarshalWithSettingsFromDatabase("frm_1", "wsp_1", "Contact", nil, status, fields, form.DefaultSettings(), t0, t0)
}

// plain turns stored values into strings and []string for comparison.
func plain(data map[string]submission.Value) map[string]any {
	out := make(map[string]any, len(data))
	for k, v := range data {
		if v.IsList() {
			out[k] = v.Strings()
		} else {
			out[k] = v.String()
		}
	}
	return out
}

func TestNewSourceAndStatus(t *testing.T) {
	tests := []struct {
		status  form.Status
		source  submission.Source
		wantErr error
	}{
		{form.StatusDraft, submission.SourceAPI, nil},
		{form.StatusPublished, submission.SourceAPI, nil},
		{form.StatusArchived, submission.SourceAPI, domain.ErrFormClosed},
		{form.StatusDraft, submission.SourceForm, domain.ErrFormClosed},
		{form.StatusPublished, submission.SourceForm, nil},
		{form.StatusArchived, submission.SourceForm, domain.ErrFormClosed},
	}
	for _, tt := range tests {
		t.Run(string(tt.source)+" on "+string(tt.status), func(t *testing.T) {
			f := formWith(tt.status, testFields())
			s, err := submission.New("sub_1", f, map[string]submission.Input{"fld_name": "Jane"},
				submission.Metadata{Source: tt.source}, t0)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) || s != nil {
					t.Fatalf("New = %v, %v; want %v", s, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			if s.Metadata().Source != tt.source {
				t.Fatalf("source = %q", s.Metadata().Source)
			}
		})
	}
}

func TestNewClosedFormWinsOverInvalidData(t *testing.T) {
	f := formWith(form.StatusArchived, testFields())
	_, err := submission.New("sub_1", f, map[string]submission.Input{"bogus": 1}, submission.Metadata{Source: submission.SourceAPI}, t0)
	if !errors.Is(err, domain.ErrFormClosed) {
		t.Fatalf("err = %v, want ErrFormClosed", err)
	}
}

func TestNewInvalidSource(t *testing.T) {
	for _, src := range []submission.Source{"", "web", "API", "email"} {
		t.Run(string(src), func(t *testing.T) {
			f := formWith(form.StatusPublished, testFields())
			s, err := submission.New("sub_1", f, map[string]submission.Input{"fld_name": "Jane"}, submission.Metadata{Source: src}, t0)
			if s != nil || err == nil {
				t.Fatalf("New = %v, %v", s, err)
			}
			var ve *domain.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("err = %T %v, want a validation error", err, err)
			}
		})
	}
}

func TestNewBuildsSubmission(t *testing.T) {
	f := formWith(form.StatusPublished, testFields())
	hash := "abc123"
	ua := "Mozilla/5.0"
	meta := submission.Metadata{Source: submission.SourceForm, IPHash: &hash, UserAgent: &ua,
		UTM: map[string]string{"utm_source": "news"}}
	at := time.Date(2024, 5, 1, 12, 0, 0, 0, time.FixedZone("CEST", 2*3600))
	s, err := submission.New("sub_1", f, map[string]submission.Input{
		"fld_name": "Jane", "fld_age": submission.Number("4.20"), "fld_tags": "b",
	}, meta, at)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if s.ID() != "sub_1" || s.FormID() != "frm_1" || s.WorkspaceID() != "wsp_1" {
		t.Errorf("ids = %q %q %q", s.ID(), s.FormID(), s.WorkspaceID())
	}
	if s.SubmittedAt().Location() != time.UTC || !s.SubmittedAt().Equal(at) || s.UpdatedAt().Location() != time.UTC || !s.UpdatedAt().Equal(at) {
		t.Errorf("times = %v / %v, want %v in UTC", s.SubmittedAt(), s.UpdatedAt(), at)
	}
	want := map[string]any{"fld_name": "Jane", "fld_age": "4.2", "fld_tags": []string{"b"}}
	if got := plain(s.Data()); !reflect.DeepEqual(got, want) {
		t.Errorf("data = %v, want %v", got, want)
	}
	if m := s.Metadata(); m.IPHash == nil || *m.IPHash != "abc123" || m.UserAgent == nil || m.UTM["utm_source"] != "news" {
		t.Errorf("metadata = %+v", m)
	}
	// Data returns a copy.
	d := s.Data()
	delete(d, "fld_name")
	if _, ok := s.Data()["fld_name"]; !ok {
		t.Error("Data exposes the internal map")
	}
}

func TestNewValidationError(t *testing.T) {
	f := formWith(form.StatusDraft, testFields())
	s, err := submission.New("sub_1", f, map[string]submission.Input{"fld_age": "x", "zzz": "1"},
		submission.Metadata{Source: submission.SourceAPI}, t0)
	if s != nil {
		t.Fatal("submission returned with an error")
	}
	vs := violationsOf(t, err)
	got := map[string]string{}
	for _, v := range vs {
		got[v.Field] = v.Code
	}
	want := map[string]string{"fld_name": "required", "fld_age": "invalid_number", "zzz": "unknown_field"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("violations = %v, want %v", got, want)
	}
}

func newSubmission(t *testing.T, f *form.Form) *submission.Submission {
	t.Helper()
	s, err := submission.New("sub_1", f, map[string]submission.Input{
		"fld_name": "Jane", "fld_note": "hello", "fld_age": submission.Number("30"), "fld_tags": []any{"a", "b"},
	}, submission.Metadata{Source: submission.SourceAPI}, t0)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

func TestUpdate(t *testing.T) {
	tests := []struct {
		name    string
		fields  []form.Field // nil: the original fields
		changes map[string]submission.Input
		want    map[string]any // nil: the update fails
		codes   map[string]string
	}{
		{
			name:    "merge one value",
			changes: map[string]submission.Input{"fld_note": "bye"},
			want:    map[string]any{"fld_name": "Jane", "fld_note": "bye", "fld_age": "30", "fld_tags": []string{"a", "b"}},
		},
		{
			name:    "empty change keeps everything",
			changes: map[string]submission.Input{},
			want:    map[string]any{"fld_name": "Jane", "fld_note": "hello", "fld_age": "30", "fld_tags": []string{"a", "b"}},
		},
		{
			name:    "canonicalises new values",
			changes: map[string]submission.Input{"fld_age": "3.10e1", "fld_tags": "c"},
			want:    map[string]any{"fld_name": "Jane", "fld_note": "hello", "fld_age": "31", "fld_tags": []string{"c"}},
		},
		{
			name:    "nil clears optional values",
			changes: map[string]submission.Input{"fld_note": nil, "fld_tags": nil},
			want:    map[string]any{"fld_name": "Jane", "fld_age": "30"},
		},
		{
			name:    "nil clears a required value",
			changes: map[string]submission.Input{"fld_name": nil},
			codes:   map[string]string{"fld_name": "required"},
		},
		{
			name:    "empty string clears a required value",
			changes: map[string]submission.Input{"fld_name": "  "},
			codes:   map[string]string{"fld_name": "required"},
		},
		{
			name:    "invalid new value",
			changes: map[string]submission.Input{"fld_age": "old", "fld_tags": []any{"z"}},
			codes:   map[string]string{"fld_age": "invalid_number", "fld_tags": "invalid_option"},
		},
		{
			name:    "unknown key",
			changes: map[string]submission.Input{"fld_nope": "x"},
			codes:   map[string]string{"fld_nope": "unknown_field"},
		},
		{
			name: "re-validated against current fields: a field became required",
			fields: append(testFields(),
				form.Field{ID: "fld_new", Label: "New", Type: form.TypeDate, Required: true}),
			changes: map[string]submission.Input{"fld_note": "bye"},
			codes:   map[string]string{"fld_new": "required"},
		},
		{
			name: "re-validated against current fields: an option went away",
			fields: []form.Field{
				{ID: "fld_name", Label: "Name", Type: form.TypeText, Required: true},
				{ID: "fld_tags", Label: "Tags", Type: form.TypeCheckbox, Options: []string{"a"}},
			},
			changes: map[string]submission.Input{"fld_name": "Joe"},
			codes:   map[string]string{"fld_tags": "invalid_option"},
		},
		{
			name: "values of removed fields are kept unchanged",
			fields: []form.Field{
				{ID: "fld_name", Label: "Name", Type: form.TypeText, Required: true},
				{ID: "fld_extra", Label: "Extra", Type: form.TypeText},
			},
			changes: map[string]submission.Input{"fld_name": "Joe", "fld_extra": "more"},
			want: map[string]any{"fld_name": "Joe", "fld_extra": "more",
				"fld_note": "hello", "fld_age": "30", "fld_tags": []string{"a", "b"}},
		},
		{
			name: "a removed field cannot be changed",
			fields: []form.Field{
				{ID: "fld_name", Label: "Name", Type: form.TypeText, Required: true},
			},
			changes: map[string]submission.Input{"fld_note": "x"},
			codes:   map[string]string{"fld_note": "unknown_field"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSubmission(t, formWith(form.StatusPublished, testFields()))
			before := plain(s.Data())
			fields := tt.fields
			if fields == nil {
				fields = testFields()
			}
			err := s.Update(formWith(form.StatusPublished, fields), tt.changes, t1.In(time.FixedZone("X", -5*3600)))
			if tt.want != nil {
				if err != nil {
					t.Fatalf("Update: %v", err)
				}
				if got := plain(s.Data()); !reflect.DeepEqual(got, tt.want) {
					t.Fatalf("data = %v, want %v", got, tt.want)
				}
				if !s.UpdatedAt().Equal(t1) || s.UpdatedAt().Location() != time.UTC {
					t.Fatalf("updatedAt = %v", s.UpdatedAt())
				}
				if !s.SubmittedAt().Equal(t0) {
					t.Fatalf("submittedAt changed: %v", s.SubmittedAt())
				}
				return
			}
			vs := violationsOf(t, err)
			got := map[string]string{}
			for _, v := range vs {
				got[v.Field] = v.Code
			}
			if !reflect.DeepEqual(got, tt.codes) {
				t.Fatalf("violations = %v, want %v", got, tt.codes)
			}
			if after := plain(s.Data()); !reflect.DeepEqual(after, before) {
				t.Fatalf("data changed on failure: %v, was %v", after, before)
			}
			if !s.UpdatedAt().Equal(t0) {
				t.Fatalf("updatedAt changed on failure: %v", s.UpdatedAt())
			}
		})
	}
}

func TestUpdateDraftForm(t *testing.T) {
	s := newSubmission(t, formWith(form.StatusDraft, testFields()))
	if err := s.Update(formWith(form.StatusDraft, testFields()), map[string]submission.Input{"fld_note": "x"}, t1); err != nil {
		t.Fatalf("Update on a draft form: %v", err)
	}
}

func TestUnmarshalFromDatabaseUTC(t *testing.T) {
	loc := time.FixedZone("X", 7*3600)
	s := submission.UnmarshalFromDatabase("sub_1", "wsp_1", "frm_1", map[string]submission.Value{"a": submission.Single("b")},
		submission.Metadata{Source: submission.SourceAPI}, t0.In(loc), t1.In(loc))
	if s.SubmittedAt().Location() != time.UTC || s.UpdatedAt().Location() != time.UTC || !s.SubmittedAt().Equal(t0) {
		t.Fatalf("times = %v %v", s.SubmittedAt(), s.UpdatedAt())
	}
}
