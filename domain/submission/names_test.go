package submission_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
)

// keyedForm is testFields with keys: "name", "note", "age" and "tags" (the labels' defaults),
// and a field whose key is another field's ID.
func keyedForm(status form.Status) *form.Form {
	fields := append(testFields(), form.Field{ID: "fld_odd", Label: "Odd", Type: form.TypeText, Key: "fld_note"})
	return formWith(status, fields)
}

// Answers are named by field ID or by field key, in New, Update, Prepare and Validate alike;
// what is stored is keyed by field ID.
func TestAnswersByKey(t *testing.T) {
	tests := []struct {
		name  string
		input map[string]submission.Input
		// update is the Update's changes when they differ from input.
		update map[string]submission.Input
		want   map[string]any    // nil: refused
		codes  map[string]string // the violations when refused
	}{
		{
			name:  "by ID",
			input: map[string]submission.Input{"fld_name": "Ada", "fld_age": submission.Number("36")},
			want:  map[string]any{"fld_name": "Ada", "fld_age": "36"},
		},
		{
			name:  "by key",
			input: map[string]submission.Input{"name": "Ada", "age": submission.Number("36"), "tags": []any{"a", "c"}},
			want:  map[string]any{"fld_name": "Ada", "fld_age": "36", "fld_tags": []string{"a", "c"}},
		},
		{
			name:  "some by ID, others by key",
			input: map[string]submission.Input{"fld_name": "Ada", "note": "hi"},
			want:  map[string]any{"fld_name": "Ada", "fld_note": "hi"},
		},
		{
			name:  "a name that is an ID and another field's key means the field with that ID",
			input: map[string]submission.Input{"name": "Ada", "fld_note": "hi"},
			want:  map[string]any{"fld_name": "Ada", "fld_note": "hi"},
		},
		{
			name:  "one field named both ways",
			input: map[string]submission.Input{"fld_name": "Ada", "name": "Bob"},
			codes: map[string]string{"fld_name": "invalid_value"},
		},
		{
			name:  "named both ways is the field's one violation, whatever its values",
			input: map[string]submission.Input{"fld_name": "Ada", "fld_age": "old", "age": "also old"},
			codes: map[string]string{"fld_age": "invalid_value"},
		},
		{
			name:  "a key's answer is checked as the field's, reported at its ID",
			input: map[string]submission.Input{"name": "Ada", "age": "old"},
			codes: map[string]string{"fld_age": "invalid_number"},
		},
		{
			name:  "a name that is neither",
			input: map[string]submission.Input{"name": "Ada", "Name": "Bob", "nope": "x", "fld_nope": "y"},
			codes: map[string]string{"Name": "unknown_field", "nope": "unknown_field", "fld_nope": "unknown_field"},
		},
		{
			name:   "required holds by key",
			input:  map[string]submission.Input{"note": "hi"},
			update: map[string]submission.Input{"note": "hi", "name": nil},
			codes:  map[string]string{"fld_name": "required"},
		},
	}
	check := func(t *testing.T, data map[string]submission.Value, err error, want map[string]any, wantCodes map[string]string) {
		t.Helper()
		if want == nil {
			if got := codes(t, err); !reflect.DeepEqual(got, wantCodes) {
				t.Fatalf("violations = %v, want %v", got, wantCodes)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if got := plain(data); !reflect.DeepEqual(got, want) {
			t.Fatalf("data = %v, want %v", got, want)
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Run("New", func(t *testing.T) {
				s, err := submission.New("sub_1", keyedForm(form.StatusPublished), tt.input, submission.Metadata{Source: submission.SourceAPI}, t0)
				var data map[string]submission.Value
				if s != nil {
					data = s.Data()
				}
				check(t, data, err, tt.want, tt.codes)
			})
			t.Run("Validate", func(t *testing.T) {
				data, err := submission.Validate(keyedForm(form.StatusPublished).Fields(), tt.input)
				check(t, data, err, tt.want, tt.codes)
			})
			t.Run("Prepare", func(t *testing.T) {
				d, err := submission.Prepare(keyedForm(form.StatusPublished), tt.input, submission.Metadata{}, submission.FileLimits{})
				var data map[string]submission.Value
				if d != nil {
					s, serr := d.Submit("sub_1", t0)
					if serr != nil {
						t.Fatal(serr)
					}
					data = s.Data()
				}
				check(t, data, err, tt.want, tt.codes)
			})
			t.Run("Update", func(t *testing.T) {
				s, err := submission.New("sub_1", keyedForm(form.StatusPublished), map[string]submission.Input{"fld_name": "Jane", "fld_tags": []any{"b"}},
					submission.Metadata{Source: submission.SourceAPI}, t0)
				if err != nil {
					t.Fatal(err)
				}
				before := plain(s.Data())
				changes := tt.input
				if tt.update != nil {
					changes = tt.update
				}
				err = s.Update(keyedForm(form.StatusPublished), changes, t1)
				if tt.want == nil {
					check(t, nil, err, nil, tt.codes)
					if after := plain(s.Data()); !reflect.DeepEqual(after, before) {
						t.Fatalf("data changed on failure: %v, was %v", after, before)
					}
					return
				}
				want := map[string]any{"fld_tags": []string{"b"}}
				for k, v := range tt.want {
					want[k] = v
				}
				check(t, s.Data(), err, want, nil)
			})
		})
	}
}

// The violation of a field named both ways names the field: its label, its ID and its key.
func TestAnswerNamedTwiceSaysWhich(t *testing.T) {
	_, err := submission.New("sub_1", keyedForm(form.StatusPublished), map[string]submission.Input{"fld_name": "Ada", "name": "Bob"},
		submission.Metadata{Source: submission.SourceAPI}, t0)
	vs := violationsOf(t, err)
	if len(vs) != 1 {
		t.Fatalf("violations: %+v", vs)
	}
	for _, part := range []string{"Name", "fld_name", "name"} {
		if !strings.Contains(vs[0].Message, part) {
			t.Errorf("message %q does not name %q", vs[0].Message, part)
		}
	}
}

// A file link sent under the field's key is checked as one sent under its ID.
func TestOwnLinksByKey(t *testing.T) {
	f := fileForm(form.StatusPublished)
	vs := submission.OwnLinks(f.Fields(), map[string]submission.Input{"cv": []any{"https://forms.example.com/files/x.pdf"}},
		"https://forms.example.com")
	if len(vs) != 1 || vs[0].Field != "fld_cv" || vs[0].Code != "invalid_value" {
		t.Fatalf("own link by key: %+v", vs)
	}
}
