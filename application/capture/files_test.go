package capture_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/formward/formward/adapters/objectstore"
	"github.com/formward/formward/application"
	"github.com/formward/formward/application/apptest"
	"github.com/formward/formward/application/capture"
	"github.com/formward/formward/application/forms"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/apikey"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
)

// newFilesHarness is the usual harness with the local object store on a temp dir.
func newFilesHarness(t *testing.T) (*apptest.Harness, *objectstore.Local) {
	t.Helper()
	store, err := objectstore.NewLocal(filepath.Join(t.TempDir(), "files"))
	if err != nil {
		t.Fatal(err)
	}
	h := apptest.NewWith(application.Settings{}, apptest.WithFiles(store))
	return h, store
}

func putFile(t *testing.T, store *objectstore.Local, ws, formID, name string) string {
	t.Helper()
	key, err := objectstore.NewKey(ws, formID, name)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Put(ctx, key, strings.NewReader("data"), 4, "text/plain"); err != nil {
		t.Fatal(err)
	}
	return key
}

func exists(store *objectstore.Local, key string) bool {
	rc, _, err := store.Get(ctx, key)
	if err == nil {
		_ = rc.Close()
	}
	return err == nil
}

func TestDeleteSubmissionDeletesItsFiles(t *testing.T) {
	h, store := newFilesHarness(t)
	f := h.CreateForm(t, "wsp_a", form.FieldSpec{Label: "Name", Type: "text"}, form.FieldSpec{Label: "CV", Type: "file"})
	other := h.CreateForm(t, "wsp_a", form.FieldSpec{Label: "CV", Type: "file"})
	signer := objectstore.Signer{Key: []byte("k"), BaseURL: "https://forms.example.com"}
	mine := putFile(t, store, "wsp_a", f.ID(), "cv.pdf")
	kept := putFile(t, store, "wsp_a", f.ID(), "other-submission.pdf")
	foreign := putFile(t, store, "wsp_a", other.ID(), "foreign.pdf")
	s, err := h.App.Commands.CaptureSubmission.Handle(ctx, capture.CaptureSubmission{
		FormID: f.ID(), Source: submission.SourceAPI,
		Data: map[string]submission.Input{
			f.Fields()[0].ID: "https://forms.example.com/files/" + kept, // not a file field: left alone
			f.Fields()[1].ID: []any{signer.Reference(mine), signer.Reference(foreign)},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.App.Commands.DeleteSubmission.Handle(ctx, capture.DeleteSubmission{FormID: f.ID(), ID: s.ID()}); err != nil {
		t.Fatal(err)
	}
	if exists(store, mine) {
		t.Error("the submission's file survived")
	}
	if !exists(store, kept) || !exists(store, foreign) {
		t.Error("a file the submission does not own was deleted")
	}
	if err := h.App.Commands.DeleteSubmission.Handle(ctx, capture.DeleteSubmission{FormID: f.ID(), ID: s.ID()}); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
}

func TestDeleteFormDeletesItsFiles(t *testing.T) {
	h, store := newFilesHarness(t)
	f := h.CreateForm(t, "wsp_a", form.FieldSpec{Label: "CV", Type: "file"})
	other := h.CreateForm(t, "wsp_a", form.FieldSpec{Label: "CV", Type: "file"})
	a := putFile(t, store, "wsp_a", f.ID(), "a.pdf")
	b := putFile(t, store, "wsp_a", f.ID(), "b.pdf")
	kept := putFile(t, store, "wsp_a", other.ID(), "c.pdf")
	if err := h.App.Commands.DeleteForm.Handle(apptest.As("wsp_b", apikey.ScopeAdmin), forms.DeleteForm{ID: f.ID()}); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("other workspace: %v", err)
	}
	if !exists(store, a) {
		t.Fatal("another workspace deleted the files")
	}
	if err := h.App.Commands.DeleteForm.Handle(ctx, forms.DeleteForm{ID: f.ID()}); err != nil {
		t.Fatal(err)
	}
	if exists(store, a) || exists(store, b) {
		t.Error("the form's files survived")
	}
	if !exists(store, kept) {
		t.Error("another form's file was deleted")
	}
	if n, _ := store.Usage(ctx, objectstore.FormPrefix("wsp_a", f.ID())); n != 0 {
		t.Errorf("usage after delete = %d", n)
	}
}
