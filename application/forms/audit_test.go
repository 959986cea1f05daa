package forms_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/formward/formward/application/apptest"
	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/application/forms"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/member"
)

// ada is a signed-in editor of wsp_a: the audit events name her as the actor.
var ada = auth.WithPrincipal(context.Background(), auth.Principal{WorkspaceID: "wsp_a", Role: member.RoleEditor,
	Actor: audit.Actor{Type: audit.ActorUser, ID: "usr_ada", Name: "Ada Lovelace"}})

// onlyEvent returns the one event of the action, failing when there is not exactly one.
func onlyEvent(t *testing.T, h *apptest.Harness, action audit.Action) audit.Event {
	t.Helper()
	evs := h.Audit.Of(action)
	if len(evs) != 1 {
		t.Fatalf("%s: %d events, want 1", action, len(evs))
	}
	return evs[0]
}

func TestFormChangesAreAudited(t *testing.T) {
	h := apptest.New()
	v, err := h.App.Commands.CreateForm.Handle(ada, forms.CreateForm{Draft: form.Draft{Name: "Volunteer sign-up",
		Fields: []form.FieldSpec{{Label: "Name", Type: "text"}, {Label: "Email", Type: "email"}}}})
	if err != nil {
		t.Fatal(err)
	}
	f := v.Form
	created := onlyEvent(t, h, audit.FormCreated)
	if created.Actor.ID != "usr_ada" || created.Actor.Type != audit.ActorUser || created.WorkspaceID != "wsp_a" ||
		*created.Target != (audit.Target{Type: "form", ID: f.ID()}) || created.Details["name"] != "Volunteer sign-up" || created.Details["fields"] != 2 {
		t.Fatalf("form.created = %+v", created)
	}

	// One question kept, one edited, one removed, one added; the name changes too.
	old := f.Fields()
	_, err = h.App.Commands.UpdateForm.Handle(ada, forms.UpdateForm{ID: f.ID(), Patch: form.Patch{
		Name: apptest.Ptr("Volunteers"),
		Fields: &[]form.FieldSpec{{ID: old[0].ID, Label: "Full name", Type: "text"},
			{Label: "Phone", Type: "text"}}}})
	if err != nil {
		t.Fatal(err)
	}
	updated := onlyEvent(t, h, audit.FormUpdated)
	want := map[string]any{"name": "Volunteers", "changed": []string{"name", "fields"},
		"fields_added": 1, "fields_removed": 1, "fields_edited": 1}
	if !reflect.DeepEqual(updated.Details, want) || updated.Actor.Name != "Ada Lovelace" || updated.Target.ID != f.ID() {
		t.Fatalf("form.updated = %+v, want details %v", updated, want)
	}

	// A patch that changes nothing records nothing.
	if _, err := h.App.Commands.UpdateForm.Handle(ada, forms.UpdateForm{ID: f.ID(), Patch: form.Patch{Name: apptest.Ptr("Volunteers")}}); err != nil {
		t.Fatal(err)
	}
	if n := len(h.Audit.Of(audit.FormUpdated)); n != 1 {
		t.Fatalf("an unchanged form recorded %d form.updated events", n)
	}

	for _, step := range []struct {
		status string
		action audit.Action
	}{{"published", audit.FormPublished}, {"archived", audit.FormArchived}} {
		if _, err := h.App.Commands.UpdateForm.Handle(ada, forms.UpdateForm{ID: f.ID(), Patch: form.Patch{Status: apptest.Ptr(step.status)}}); err != nil {
			t.Fatal(err)
		}
		e := onlyEvent(t, h, step.action)
		if e.Details["status"] != step.status || e.Actor.ID != "usr_ada" || e.Target.ID != f.ID() || !reflect.DeepEqual(e.Details["changed"], []string{"status"}) {
			t.Fatalf("%s = %+v", step.action, e)
		}
	}

	// Back to draft is an update that names the status.
	if _, err := h.App.Commands.UpdateForm.Handle(ada, forms.UpdateForm{ID: f.ID(), Patch: form.Patch{Status: apptest.Ptr("draft")}}); err != nil {
		t.Fatal(err)
	}
	evs := h.Audit.Of(audit.FormUpdated)
	if len(evs) != 2 {
		t.Fatalf("%d form.updated events, want 2", len(evs))
	}
	if last := evs[len(evs)-1]; last.Details["status"] != "draft" || last.Details["previous_status"] != "archived" {
		t.Fatalf("back to draft = %+v", last)
	}

	if err := h.App.Commands.DeleteForm.Handle(ada, forms.DeleteForm{ID: f.ID()}); err != nil {
		t.Fatal(err)
	}
	if e := onlyEvent(t, h, audit.FormDeleted); e.Details["name"] != "Volunteers" || e.Target.ID != f.ID() || e.Actor.ID != "usr_ada" {
		t.Fatalf("form.deleted = %+v", e)
	}
}

func TestRefusedFormChangeIsNotAudited(t *testing.T) {
	h := apptest.New()
	f := h.CreateForm(t, "wsp_a", form.FieldSpec{Label: "Name", Type: "text"})
	if _, err := h.App.Commands.UpdateForm.Handle(ada, forms.UpdateForm{ID: f.ID(), Patch: form.Patch{Status: apptest.Ptr("gone")}}); err == nil {
		t.Fatal("an unknown status was accepted")
	}
	if n := len(h.Audit.Of(audit.FormUpdated)) + len(h.Audit.Of(audit.FormPublished)); n != 0 {
		t.Fatalf("a refused change recorded %d events", n)
	}
}
