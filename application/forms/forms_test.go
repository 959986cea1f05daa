package forms_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/formward/formward/application/apptest"
	"github.com/formward/formward/application/forms"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/apikey"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/ports"
)

// ctx acts as an admin key of workspace wsp_a: the use cases read who acts from the context.
var ctx = apptest.As("wsp_a", apikey.ScopeAdmin)

func TestCreateForm(t *testing.T) {
	h := apptest.New()
	f := h.CreateForm(t, "wsp_a",
		form.FieldSpec{Label: "Name", Type: "text", Required: true},
		form.FieldSpec{Label: "Email", Type: "email"})
	if f.Status() != form.StatusDraft {
		t.Errorf("status = %q", f.Status())
	}
	if !strings.HasPrefix(f.ID(), ports.PrefixForm+"_") {
		t.Errorf("form ID = %q", f.ID())
	}
	for _, fl := range f.Fields() {
		if !strings.HasPrefix(fl.ID, ports.PrefixField+"_") {
			t.Errorf("field ID = %q", fl.ID)
		}
	}
	if !f.CreatedAt().Equal(apptest.Now) {
		t.Errorf("createdAt = %v", f.CreatedAt())
	}
	if len(h.Forms.Items) != 1 || len(h.Forms.Events) != 0 {
		t.Fatalf("stored %d forms, %d events", len(h.Forms.Items), len(h.Forms.Events))
	}
	if _, err := h.App.Queries.GetForm.Handle(ctx, forms.GetForm{ID: f.ID()}); err != nil {
		t.Fatalf("GetForm: %v", err)
	}

	_, err := h.App.Commands.CreateForm.Handle(ctx, forms.CreateForm{
		Draft: form.Draft{Name: " ", Fields: []form.FieldSpec{{Label: "x", Type: "radio"}}}})
	var ve *domain.ValidationError
	if !errors.As(err, &ve) || len(ve.Violations) != 2 {
		t.Fatalf("invalid draft: %v", err)
	}
	if len(h.Forms.Items) != 1 {
		t.Fatal("invalid form stored")
	}
}

func TestUpdateFormPublishedEvents(t *testing.T) {
	h := apptest.New()
	f := h.CreateForm(t, "wsp_a", form.FieldSpec{Label: "Name", Type: "text"})

	steps := []struct {
		status    string
		wantEvent bool
	}{
		{"draft", false},     // draft → draft
		{"published", true},  // draft → published
		{"published", false}, // published → published
		{"archived", false},  // published → archived
		{"published", true},  // archived → published
		{"draft", false},     // published → draft
		{"archived", false},  // draft → archived
		{"draft", false},     // archived → draft
	}
	for i, st := range steps {
		h.Clock.At = apptest.Now.Add(time.Duration(i+1) * time.Minute)
		before := len(h.Forms.Events)
		got := h.SetStatus(t, "wsp_a", f.ID(), st.status)
		if string(got.Status()) != st.status || !got.UpdatedAt().Equal(h.Clock.At) {
			t.Fatalf("step %d: status %q updatedAt %v", i, got.Status(), got.UpdatedAt())
		}
		added := h.Forms.Events[before:]
		if !st.wantEvent {
			if len(added) != 0 {
				t.Fatalf("step %d (→%s): unexpected events %+v", i, st.status, added)
			}
			continue
		}
		if len(added) != 1 {
			t.Fatalf("step %d (→%s): %d events, want exactly one", i, st.status, len(added))
		}
		e := added[0]
		if e.Type != event.FormPublished || e.FormID != f.ID() || e.WorkspaceID != "wsp_a" || !strings.HasPrefix(e.ID, ports.PrefixEvent+"_") {
			t.Fatalf("event = %+v", e)
		}
		want := map[string]any{"name": "Contact", "published_at": domain.FormatTime(h.Clock.At)}
		if !reflect.DeepEqual(e.Data, want) || !e.OccurredAt.Equal(h.Clock.At) {
			t.Fatalf("event data = %v at %v, want %v", e.Data, e.OccurredAt, want)
		}
	}
	if n := len(h.Forms.Events); n != 2 {
		t.Fatalf("total form.published events = %d, want 2", n)
	}
}

func TestUpdateFormPublishWithRenameUsesNewName(t *testing.T) {
	h := apptest.New()
	f := h.CreateForm(t, "wsp_a")
	_, err := h.App.Commands.UpdateForm.Handle(ctx, forms.UpdateForm{ID: f.ID(),
		Patch: form.Patch{Name: apptest.Ptr("Signup"), Status: apptest.Ptr("published")}})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Forms.Events) != 1 || h.Forms.Events[0].Data["name"] != "Signup" {
		t.Fatalf("events = %+v", h.Forms.Events)
	}
}

func TestUpdateFormFailures(t *testing.T) {
	h := apptest.New()
	f := h.CreateForm(t, "wsp_a", form.FieldSpec{Label: "Name", Type: "text"})
	fieldID := f.Fields()[0].ID

	// Invalid patch: nothing stored, no event, even though it would publish.
	_, err := h.App.Commands.UpdateForm.Handle(ctx, forms.UpdateForm{ID: f.ID(),
		Patch: form.Patch{Status: apptest.Ptr("published"), Fields: &[]form.FieldSpec{{ID: "fld_foreign", Label: "x", Type: "text"}}}})
	var ve *domain.ValidationError
	if !errors.As(err, &ve) || ve.Violations[0].Field != "fields[0].id" {
		t.Fatalf("err = %v, want a violation at fields[0].id", err)
	}
	if len(h.Forms.Events) != 0 {
		t.Fatal("event emitted for a rejected patch")
	}
	got, _ := h.App.Queries.GetForm.Handle(ctx, forms.GetForm{ID: f.ID()})
	if got.Form.Status() != form.StatusDraft || got.Form.Fields()[0].ID != fieldID {
		t.Fatalf("form changed: %q %v", got.Form.Status(), got.Form.Fields())
	}

	// Another workspace's form is not found.
	_, err = h.App.Commands.UpdateForm.Handle(apptest.As("wsp_b", apikey.ScopeAdmin), forms.UpdateForm{ID: f.ID(),
		Patch: form.Patch{Status: apptest.Ptr("published")}})
	if !errors.Is(err, domain.ErrNotFound) || len(h.Forms.Events) != 0 {
		t.Fatalf("err = %v, events = %d", err, len(h.Forms.Events))
	}
	if _, err := h.App.Queries.GetForm.Handle(apptest.As("wsp_b", apikey.ScopeAdmin), forms.GetForm{ID: f.ID()}); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("GetForm from another workspace: %v", err)
	}
}

// storeSubmissions stores n submissions of the form, which the form's count then holds.
func storeSubmissions(t *testing.T, h *apptest.Harness, f *form.Form, n int) {
	t.Helper()
	for range n {
		s, err := submission.New(h.IDs.New(ports.PrefixSubmission), f, nil, submission.Metadata{Source: submission.SourceAPI}, apptest.Now)
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Submissions.Add(context.Background(), s, event.Event{}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestUpdateFormReturnsCount(t *testing.T) {
	h := apptest.New()
	f := h.CreateForm(t, "wsp_a")
	storeSubmissions(t, h, f, 7)
	v, err := h.App.Commands.UpdateForm.Handle(ctx, forms.UpdateForm{ID: f.ID(), Patch: form.Patch{Name: apptest.Ptr("N")}})
	if err != nil || v.SubmissionCount != 7 || v.Form.Name() != "N" {
		t.Fatalf("view = %+v, %v", v, err)
	}
}

func TestListFormsHasMore(t *testing.T) {
	for _, tt := range []apptest.PageCase{
		{Stored: 0, Limit: 20, WantN: 0, WantMore: false},
		{Stored: 3, Limit: 2, WantN: 2, WantMore: true},
		{Stored: 3, Limit: 3, WantN: 3, WantMore: false},
		{Stored: 4, Limit: 3, WantN: 3, WantMore: true},
		{Stored: 1, Limit: 1, WantN: 1, WantMore: false},
		{Stored: 2, Limit: 1, WantN: 1, WantMore: true},
	} {
		t.Run(tt.String(), func(t *testing.T) {
			h := apptest.New()
			var ids []string
			for i := 0; i < tt.Stored; i++ {
				ids = append(ids, h.CreateForm(t, "wsp_a").ID())
			}
			h.CreateForm(t, "wsp_other") // never listed
			if len(ids) > 0 {
				storeSubmissions(t, h, h.Forms.Items[len(ids)-1], 5)
			}
			views, more, err := h.App.Queries.ListForms.Handle(ctx, forms.ListForms{Page: ports.Page{Limit: tt.Limit}})
			if err != nil {
				t.Fatal(err)
			}
			if len(views) != tt.WantN || more != tt.WantMore {
				t.Fatalf("got %d forms, more=%v; want %d, %v", len(views), more, tt.WantN, tt.WantMore)
			}
			if len(h.Forms.ListPages) != 1 || h.Forms.ListPages[0].Limit != tt.Limit+1 {
				t.Fatalf("repository asked for %+v, want limit %d", h.Forms.ListPages, tt.Limit+1)
			}
			for i, v := range views {
				if v.Form.WorkspaceID() != "wsp_a" {
					t.Fatalf("listed another workspace's form")
				}
				if want := ids[len(ids)-1-i]; v.Form.ID() != want {
					t.Fatalf("item %d = %s, want %s (newest first)", i, v.Form.ID(), want)
				}
			}
			if len(views) > 0 && views[0].SubmissionCount != 5 {
				t.Fatalf("submission count = %d", views[0].SubmissionCount)
			}
		})
	}
}

func TestListFormsPassesStatusAndCursor(t *testing.T) {
	h := apptest.New()
	a := h.CreateForm(t, "wsp_a")
	h.CreateForm(t, "wsp_a")
	h.SetStatus(t, "wsp_a", a.ID(), "published")
	pos := &ports.Position{CreatedAt: apptest.Now, ID: "frm_x"}
	st := form.StatusPublished
	views, more, err := h.App.Queries.ListForms.Handle(ctx, forms.ListForms{Status: &st,
		Page: ports.Page{Limit: 10, After: pos}})
	if err != nil || more || len(views) != 1 || views[0].Form.ID() != a.ID() {
		t.Fatalf("views = %v more = %v err = %v", views, more, err)
	}
	if h.Forms.ListPages[0].After != pos {
		t.Fatal("cursor position not passed on")
	}
}
