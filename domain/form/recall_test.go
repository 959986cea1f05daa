package form_test

import (
	"reflect"
	"testing"

	"github.com/formward/formward/domain/form"
)

func TestSplitRecall(t *testing.T) {
	tests := map[string][]form.RecallPart{
		"No recall":                nil,
		"Hello {{ name }}!":        {{Text: "Hello "}, {Name: "name"}, {Text: "!"}},
		"{{a}}{{b}}":               {{Name: "a"}, {Name: "b"}},
		"Open {{ and no close":     nil,
		"Empty {{}} then {{name}}": {{Text: "Empty {{"}, {Text: "}} then "}, {Name: "name"}},
		"Two words {{a b}}":        nil,
	}
	for in, want := range tests {
		if got := form.SplitRecall(in); !reflect.DeepEqual(got, want) {
			t.Errorf("SplitRecall(%q) = %#v, want %#v", in, got, want)
		}
	}
}

func TestRecallMustNameAnEarlierQuestion(t *testing.T) {
	help := "Hi {{name}}"
	// Accepted: an earlier page, earlier on the same page, by key or by ID, in label and help.
	newForm(t,
		form.FieldSpec{Label: "Name", Type: "text"},
		form.FieldSpec{Label: "Hello {{name}}, your age?", Help: &help, Type: "number"},
		form.FieldSpec{Label: "Thanks {{ name }}", Type: "text", Page: ptr(2)},
	)
	tests := []struct {
		name  string
		specs []form.FieldSpec
		path  string
	}{
		{"no such field", []form.FieldSpec{{Label: "Hello {{nobody}}", Type: "text"}}, "fields[0].label"},
		{"itself", []form.FieldSpec{{Label: "Hello {{hello_hello}}", Type: "text", Key: ptr("hello_hello")}}, "fields[0].label"},
		{"a later page", []form.FieldSpec{{Label: "Hi {{later}}", Type: "text"}, {Label: "Later", Type: "text", Page: ptr(2)}}, "fields[0].label"},
		{"later on the same page", []form.FieldSpec{{Label: "Hi {{later}}", Type: "text"}, {Label: "Later", Type: "text"}}, "fields[0].label"},
		{"in the help", []form.FieldSpec{{Label: "Hi", Help: ptr("{{x}}"), Type: "text"}}, "fields[0].help"},
		{"a file", []form.FieldSpec{{Label: "CV", Type: "file"}, {Label: "Nice {{cv}}", Type: "text"}}, "fields[1].label"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ids, _ := seqIDs()
			_, err := form.New("frm_1", "wsp_1", form.Draft{Name: "Quiz", Fields: tt.specs}, ids, form.DefaultLimits, t0)
			if vs := violations(t, err); !hasViolation(vs, tt.path, "unknown_recall") {
				t.Fatalf("violations %v", vs)
			}
		})
	}
}

func TestThankYouRecallMustNameAField(t *testing.T) {
	ok := "Thanks {{name}}, {{ score }} points"
	f, ids := newForm(t, form.FieldSpec{Label: "Name", Type: "text"})
	s := f.Settings()
	s.ThankYouMessage = &ok
	if _, err := f.Apply(form.Patch{Settings: &s}, ids, form.DefaultLimits, t1); err != nil {
		t.Fatal(err)
	}
	bad := "Thanks {{nobody}}"
	s.ThankYouMessage = &bad
	_, err := f.Apply(form.Patch{Settings: &s}, ids, form.DefaultLimits, t1)
	if vs := violations(t, err); !hasViolation(vs, "settings.thank_you_message", "unknown_recall") {
		t.Fatalf("violations %v", vs)
	}
}
