package submission

import (
	"strings"
	"testing"

	"github.com/formward/formward/domain/form"
)

func TestCheckFile(t *testing.T) {
	images := form.Field{ID: "fld_img", Label: "Photo", Type: form.TypeFile, MaxFileBytes: 1 << 20, Accept: []string{"image/*", "application/pdf"}}
	csv := form.Field{ID: "fld_csv", Label: "Sheet", Type: form.TypeFile, Accept: []string{"text/csv"}}
	docxType := "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
	docx := form.Field{ID: "fld_doc", Label: "Letter", Type: form.TypeFile, Accept: []string{docxType}}
	any := form.Field{ID: "fld_any", Label: "Any", Type: form.TypeFile}
	tests := []struct {
		name     string
		field    form.Field
		fi       FileInfo
		wantType string
		wantCode string
	}{
		{"png", images, FileInfo{"a.png", 100, "image/png", "image/png"}, "image/png", ""},
		{"pdf with params", images, FileInfo{"a.pdf", 100, "application/pdf; name=x", "application/pdf"}, "application/pdf", ""},
		{"no declared type", images, FileInfo{"a.png", 100, "", "image/png"}, "image/png", ""},
		{"too large", images, FileInfo{"a.png", 2 << 20, "image/png", "image/png"}, "", "file_too_large"},
		{"over the default size", any, FileInfo{"a.bin", DefaultMaxFileBytes + 1, "", "application/octet-stream"}, "", "file_too_large"},
		{"html declared as png", images, FileInfo{"a.png", 100, "image/png", "text/html; charset=utf-8"}, "", "file_type_not_allowed"},
		{"declared type not accepted", images, FileInfo{"a.html", 100, "text/html", "text/html; charset=utf-8"}, "", "file_type_not_allowed"},
		{"csv", csv, FileInfo{"a.csv", 100, "text/csv", "text/plain; charset=utf-8"}, "text/csv", ""},
		{"docx", docx, FileInfo{"a.docx", 100, docxType, "application/zip"}, docxType, ""},
		{"anything goes", any, FileInfo{"a.x", 1 << 20, "application/x-thing", "application/octet-stream"}, "application/x-thing", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, v := CheckFile(tt.field, tt.fi)
			switch {
			case tt.wantCode == "" && v != nil:
				t.Fatalf("unexpected %+v", v)
			case tt.wantCode != "" && (v == nil || v.Code != tt.wantCode || v.Field != tt.field.ID || !strings.Contains(v.Message, tt.fi.Name)):
				t.Fatalf("got %+v, want code %s", v, tt.wantCode)
			case got != tt.wantType:
				t.Fatalf("type %q, want %q", got, tt.wantType)
			}
		})
	}
}

func TestFileName(t *testing.T) {
	for in, want := range map[string]string{
		"report.pdf":                       "report.pdf",
		"../../etc/passwd":                 "passwd",
		".htaccess":                        "htaccess",
		"":                                 "file",
		"..":                               "file",
		"a b/c d.png":                      "c_d.png",
		`C:\Users\me\Résumé final.pdf`:     "R_sum__final.pdf",
		"x.meta":                           "x.meta_",
		strings.Repeat("a", 300) + ".jpeg": strings.Repeat("a", 95) + ".jpeg",
	} {
		if got := FileName(in); got != want {
			t.Errorf("FileName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFileLimits(t *testing.T) {
	fields := []form.Field{{ID: "fld_a", Label: "A", Type: form.TypeFile}, {ID: "fld_b", Label: "B", Type: form.TypeFile}}
	l := FileLimits{PerField: 3, PerPost: 5}
	if vs := l.Check(fields, map[string]int{"fld_a": 3, "fld_b": 2}); len(vs) != 0 {
		t.Fatalf("within limits: %v", vs)
	}
	vs := l.Check(fields, map[string]int{"fld_a": 4, "fld_b": 3})
	if len(vs) != 2 || vs[0].Field != "fld_a" || vs[1].Field != "files" || vs[0].Code != "too_many_files" || !strings.Contains(vs[1].Message, "at most 5") {
		t.Fatalf("over: %+v", vs)
	}
	if vs := (FileLimits{}).Check(fields, map[string]int{"fld_a": 11}); len(vs) != 1 || !strings.Contains(vs[0].Message, "at most 10") {
		t.Fatalf("defaults: %+v", vs)
	}
}
