package submission_test

import (
	"errors"
	"testing"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
)

func fileForm(status form.Status) *form.Form {
	return formWith(status, []form.Field{
		{ID: "fld_name", Label: "Name", Type: form.TypeText, Required: true},
		{ID: "fld_cv", Label: "CV", Type: form.TypeFile, Required: true, Accept: []string{"application/pdf"}},
	})
}

func codes(t *testing.T, err error) map[string]string {
	t.Helper()
	var verr *domain.ValidationError
	if !errors.As(err, &verr) {
		t.Fatalf("want a validation error, got %v", err)
	}
	out := map[string]string{}
	for _, v := range verr.Violations {
		out[v.Field] = v.Code
	}
	return out
}

func TestPrepareTakesUploadsOnly(t *testing.T) {
	pdf := submission.FileInfo{Name: "cv.pdf", Size: 10, Declared: "application/pdf", Sniffed: "application/pdf"}
	f := fileForm(form.StatusPublished)
	d, err := submission.Prepare(f, map[string]submission.Input{"fld_name": "Ada", "fld_cv": []submission.FileInfo{pdf}}, submission.Metadata{}, submission.FileLimits{})
	if err != nil {
		t.Fatal(err)
	}
	if files := d.Files(); len(files) != 1 || files[0].ContentType != "application/pdf" || files[0].FieldID != "fld_cv" {
		t.Fatalf("files %+v", files)
	}
	if _, err := d.Submit("sub_1", t0); err == nil {
		t.Fatal("submitted before the file was attached")
	}
	if err := d.Attach("fld_cv", []string{"k1", "k2"}); err == nil {
		t.Fatal("attached more keys than files")
	}
	if err := d.Attach("fld_cv", []string{"workspaces/wsp_1/forms/frm_1/submissions/sub_1/x/cv.pdf"}); err != nil {
		t.Fatal(err)
	}
	s, err := d.Submit("sub_1", t0)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Data()["fld_cv"].Strings(); len(got) != 1 || got[0] != "workspaces/wsp_1/forms/frm_1/submissions/sub_1/x/cv.pdf" || s.Metadata().Source != submission.SourceForm {
		t.Fatalf("data %v meta %+v", got, s.Metadata())
	}

	// A link typed into a public file field (JSON or urlencoded) is refused.
	for _, v := range []submission.Input{"https://evil.example/x.pdf.exe", []any{"https://evil.example/x.pdf"}} {
		_, err = submission.Prepare(f, map[string]submission.Input{"fld_name": "Ada", "fld_cv": v}, submission.Metadata{}, submission.FileLimits{})
		if c := codes(t, err); c["fld_cv"] != "invalid_value" {
			t.Fatalf("%v: codes %v", v, c)
		}
	}
	// The same through New with the public source.
	_, err = submission.New("sub_2", f, map[string]submission.Input{"fld_name": "Ada", "fld_cv": "https://evil.example/x.pdf"}, submission.Metadata{Source: submission.SourceForm}, t0)
	if c := codes(t, err); c["fld_cv"] != "invalid_value" {
		t.Fatalf("New: codes %v", c)
	}
}

func TestPrepareReportsEveryRuleAtOnce(t *testing.T) {
	html := submission.FileInfo{Name: "x.pdf", Size: 10, Declared: "application/pdf", Sniffed: "text/html; charset=utf-8"}
	pdf := submission.FileInfo{Name: "cv.pdf", Size: 10, Declared: "application/pdf", Sniffed: "application/pdf"}
	f := fileForm(form.StatusPublished)
	_, err := submission.Prepare(f, map[string]submission.Input{"fld_cv": []submission.FileInfo{html, pdf, pdf}, "bogus": "x"},
		submission.Metadata{}, submission.FileLimits{PerField: 2, PerPost: 2})
	c := codes(t, err)
	if c["fld_name"] != "required" || c["bogus"] != "unknown_field" || c["files"] != "too_many_files" || c["fld_cv"] == "" {
		t.Fatalf("codes %v", c)
	}
	// A required file field with no upload.
	_, err = submission.Prepare(f, map[string]submission.Input{"fld_name": "Ada"}, submission.Metadata{}, submission.FileLimits{})
	if c := codes(t, err); c["fld_cv"] != "required" {
		t.Fatalf("codes %v", c)
	}
}

func TestPrepareNeedsAPublishedForm(t *testing.T) {
	for _, st := range []form.Status{form.StatusDraft, form.StatusArchived} {
		if _, err := submission.Prepare(fileForm(st), map[string]submission.Input{}, submission.Metadata{}, submission.FileLimits{}); !errors.Is(err, domain.ErrFormClosed) {
			t.Fatalf("%s: %v", st, err)
		}
	}
}

func TestUpdateKeepsStoredUploads(t *testing.T) {
	f := formWith(form.StatusPublished, []form.Field{
		{ID: "fld_name", Label: "Name", Type: form.TypeText},
		{ID: "fld_cv", Label: "CV", Type: form.TypeFile},
	})
	s := submission.UnmarshalFromDatabase("sub_1", "wsp_1", "frm_1", map[string]submission.Value{
		"fld_cv": submission.List([]string{"workspaces/wsp_1/forms/frm_1/submissions/sub_1/x/cv.pdf"}),
	}, submission.Metadata{Source: submission.SourceForm}, t0, t0)
	if err := s.Update(f, map[string]submission.Input{"fld_name": "Ada"}, t1); err != nil {
		t.Fatalf("an update must not re-check a stored upload as a typed link: %v", err)
	}
	if got := s.Data()["fld_cv"].Strings(); len(got) != 1 || got[0] != "workspaces/wsp_1/forms/frm_1/submissions/sub_1/x/cv.pdf" {
		t.Fatalf("upload changed: %v", got)
	}
}
