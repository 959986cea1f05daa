package form

import (
	"testing"
	"time"

	"github.com/formward/formward/domain"
)

func TestFileFieldRules(t *testing.T) {
	n := 0
	ids := func() string { n++; return "fld_" + string(rune('a'+n)) }
	size := func(v int64) *int64 { return &v }
	cases := []struct {
		name string
		spec FieldSpec
		want map[string]string // path → code
	}{
		{"file with rules", FieldSpec{Label: "CV", Type: "file", Accept: []string{"application/pdf", "IMAGE/*"}, MaxFileBytes: size(1 << 20)}, nil},
		{"file without rules", FieldSpec{Label: "CV", Type: "file"}, nil},
		{"bad media range", FieldSpec{Label: "CV", Type: "file", Accept: []string{"pdf", "*/*"}}, map[string]string{"fields[0].accept[0]": "invalid_value", "fields[0].accept[1]": "invalid_value"}},
		{"size too large", FieldSpec{Label: "CV", Type: "file", MaxFileBytes: size(MaxFileBytesLimit + 1)}, map[string]string{"fields[0].max_file_size": "invalid_value"}},
		{"size zero", FieldSpec{Label: "CV", Type: "file", MaxFileBytes: size(0)}, map[string]string{"fields[0].max_file_size": "invalid_value"}},
		{"rules on a text field", FieldSpec{Label: "Name", Type: "text", Accept: []string{"text/plain"}, MaxFileBytes: size(10)}, map[string]string{"fields[0].accept": "not_allowed", "fields[0].max_file_size": "not_allowed"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := New("frm_1", "wsp_1", Draft{Name: "F", Fields: []FieldSpec{c.spec}}, ids, DefaultLimits, time.Now())
			if c.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				fl := f.Fields()[0]
				if c.spec.MaxFileBytes != nil && fl.MaxFileBytes != *c.spec.MaxFileBytes {
					t.Fatalf("max = %d", fl.MaxFileBytes)
				}
				if len(c.spec.Accept) > 0 && fl.Accept[1] != "image/*" {
					t.Fatalf("accept not normalised: %v", fl.Accept)
				}
				return
			}
			verr, ok := err.(*domain.ValidationError)
			if !ok {
				t.Fatalf("want a validation error, got %v", err)
			}
			got := map[string]string{}
			for _, v := range verr.Violations {
				got[v.Field] = v.Code
			}
			for path, code := range c.want {
				if got[path] != code {
					t.Errorf("%s = %q, want %q (all %v)", path, got[path], code, got)
				}
			}
		})
	}
}
