package capture_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/formward/formward/application/apptest"
	"github.com/formward/formward/application/capture"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/apikey"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/ports"
)

func TestFileLinkPath(t *testing.T) {
	s := submission.UnmarshalFromDatabase("sub_1", "wsp_a", "frm_1", nil, submission.Metadata{}, apptest.Now, apptest.Now)
	own := ports.SubmissionFilesPrefix("wsp_a", "frm_1", "sub_1")
	hex := strings.Repeat("0f", 16)
	for _, c := range []struct {
		value, want string
	}{
		{own + "obj_1/cv.pdf", "obj_1/cv.pdf"},
		{"https://forms.example.com/files/" + ports.FormFilesPrefix("wsp_a", "frm_1") + hex + "/cv.pdf", hex + "/cv.pdf"},
		{"https://forms.example.com/files/" + ports.FormFilesPrefix("wsp_a", "frm_1") + hex + "/cv.pdf?expires=1&sig=x", hex + "/cv.pdf"},
		{own + "obj_1", ""},
		{own + "obj_1/", ""},
		{own + "obj_1/a/b.pdf", ""},
		{own + "../sub_2/obj_1/cv.pdf", ""},
		{own + "obj_1/c v.pdf", ""},
		{ports.SubmissionFilesPrefix("wsp_a", "frm_1", "sub_2") + "obj_1/cv.pdf", ""},
		{ports.SubmissionFilesPrefix("wsp_b", "frm_1", "sub_1") + "obj_1/cv.pdf", ""},
		{"https://forms.example.com/files/" + ports.FormFilesPrefix("wsp_b", "frm_1") + hex + "/cv.pdf", ""},
		{"https://cdn.example.org/cv.pdf", ""},
		{"Ada", ""},
	} {
		got, ok := capture.FileLinkPath(s, c.value)
		if got != c.want && ok || ok != (c.want != "") {
			t.Errorf("FileLinkPath(%q) = %q, %v; want %q", c.value, got, ok, c.want)
		}
	}
}

// fileSubmission stores a submission of f in the fake store whose file field names values.
func fileSubmission(t *testing.T, h *apptest.Harness, f *form.Form, id string, values ...string) *submission.Submission {
	t.Helper()
	s := submission.UnmarshalFromDatabase(id, f.WorkspaceID(), f.ID(), map[string]submission.Value{
		f.Fields()[0].ID: submission.List(values)}, submission.Metadata{Source: submission.SourceForm}, apptest.Now, apptest.Now)
	if err := h.Submissions.Add(ctx, s, event.ForSubmission("evt_"+id, event.SubmissionCreated, s, apptest.Now)); err != nil {
		t.Fatal(err)
	}
	return s
}

// A file link finds its submission by ID in the principal's workspace only, and only a file
// that submission holds.
func TestGetSubmissionFile(t *testing.T) {
	h, _ := newFilesHarness(t)
	f := h.CreateForm(t, "wsp_a", form.FieldSpec{Label: "CV", Type: "file"})
	key := ports.SubmissionFilesPrefix("wsp_a", f.ID(), "sub_1") + "obj_1/cv.pdf"
	fileSubmission(t, h, f, "sub_1", "https://cdn.example.org/x.pdf", key)

	got, err := h.App.Queries.GetSubmissionFile.Handle(apptest.As("wsp_a", apikey.ScopeReadOnly),
		capture.GetSubmissionFile{SubmissionID: "sub_1", File: "obj_1/cv.pdf"})
	if err != nil || got.Value != key || got.Submission.ID() != "sub_1" {
		t.Fatalf("got %+v, %v", got, err)
	}
	for _, q := range []capture.GetSubmissionFile{
		{SubmissionID: "sub_1", File: "obj_1/other.pdf"},
		{SubmissionID: "sub_1", File: ""},
		{SubmissionID: "sub_2", File: "obj_1/cv.pdf"},
		{SubmissionID: "sub_1", File: "https://cdn.example.org/x.pdf"},
	} {
		if _, err := h.App.Queries.GetSubmissionFile.Handle(ctx, q); !errors.Is(err, domain.ErrNotFound) {
			t.Errorf("%+v: %v, want not found", q, err)
		}
	}
	if _, err := h.App.Queries.GetSubmissionFile.Handle(apptest.As("wsp_b", apikey.ScopeAdmin),
		capture.GetSubmissionFile{SubmissionID: "sub_1", File: "obj_1/cv.pdf"}); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("another workspace: %v, want not found", err)
	}
}

// File sizes come from the file store once: a size read is remembered (a key never names
// other bytes later); a missing file has no size; another workspace's submission is left out.
func TestDescribeFiles(t *testing.T) {
	h, store := newFilesHarness(t)
	f := h.CreateForm(t, "wsp_a", form.FieldSpec{Label: "CV", Type: "file"})
	prefix := ports.SubmissionFilesPrefix("wsp_a", f.ID(), "sub_1")
	if err := store.Put(ctx, prefix+"obj_1/cv.pdf", strings.NewReader("0123456789"), 10, "application/pdf"); err != nil {
		t.Fatal(err)
	}
	s := fileSubmission(t, h, f, "sub_1", prefix+"obj_1/cv.pdf", prefix+"obj_2/gone.pdf", "https://cdn.example.org/x.pdf")
	theirs := submission.UnmarshalFromDatabase("sub_9", "wsp_b", f.ID(), map[string]submission.Value{
		f.Fields()[0].ID: submission.List([]string{ports.SubmissionFilesPrefix("wsp_b", f.ID(), "sub_9") + "obj_1/a.pdf"})},
		submission.Metadata{}, apptest.Now, apptest.Now)
	q := capture.DescribeFiles{Submissions: []*submission.Submission{s, theirs}, FieldIDs: []string{f.Fields()[0].ID}}

	got, err := h.App.Queries.DescribeFiles.Handle(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]capture.StoredFile{
		prefix + "obj_1/cv.pdf":   {Path: "obj_1/cv.pdf", Name: "cv.pdf", Size: 10},
		prefix + "obj_2/gone.pdf": {Path: "obj_2/gone.pdf", Name: "gone.pdf", Size: -1},
	}
	if len(got) != 1 || len(got["sub_1"]) != len(want) {
		t.Fatalf("described %+v", got)
	}
	for v, w := range want {
		if got["sub_1"][v] != w {
			t.Errorf("%s: %+v, want %+v", v, got["sub_1"][v], w)
		}
	}
	// The store is not asked again for a size it gave.
	if err := store.Delete(ctx, prefix+"obj_1/cv.pdf"); err != nil {
		t.Fatal(err)
	}
	got, err = h.App.Queries.DescribeFiles.Handle(ctx, q)
	if err != nil || got["sub_1"][prefix+"obj_1/cv.pdf"].Size != 10 {
		t.Fatalf("second read: %+v, %v", got, err)
	}
}
