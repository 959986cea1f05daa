package capture_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/formward/formward/application/apptest"
	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/application/capture"
	"github.com/formward/formward/application/forms"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/apikey"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/member"
)

func asMember(ws, userID string, role member.Role) context.Context {
	return auth.WithPrincipal(context.Background(), auth.Principal{WorkspaceID: ws, Role: role,
		Actor: audit.Actor{Type: audit.ActorUser, ID: userID, Name: userID}})
}

func arrangement(c capture.ResponseColumns) string {
	s := ""
	for _, col := range c.Columns {
		mark := "-"
		if col.Shown {
			mark = "+"
		}
		if col.Removed {
			mark += "removed:"
		}
		s += mark + col.Field.Label + " "
	}
	return s
}

// TestResponseColumns: each person's choice of columns is kept per form, in its order; a field
// added later appears after the shown ones; a removed field can be chosen; unknown or repeated
// fields are refused; Reset goes back to the form's order; an API key keeps nothing.
func TestResponseColumns(t *testing.T) {
	h := apptest.New()
	f := h.CreateForm(t, "wsp_a", form.FieldSpec{Label: "Name", Type: "text"}, form.FieldSpec{Label: "Email", Type: "email"},
		form.FieldSpec{Label: "Colour", Type: "text"})
	fs := f.Fields()
	ana, bob := asMember("wsp_a", "usr_ana", member.RoleViewer), asMember("wsp_a", "usr_bob", member.RoleViewer)
	get := func(ctx context.Context) capture.ResponseColumns {
		t.Helper()
		c, err := h.App.Queries.GetResponseColumns.Handle(ctx, capture.GetResponseColumns{FormID: f.ID()})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	if got := arrangement(get(ana)); got != "+Name +Email +Colour " {
		t.Fatalf("default: %s", got)
	}
	// A viewer may arrange the table: reading the form is enough.
	if _, err := h.App.Commands.SaveResponseColumns.Handle(ana, capture.SaveResponseColumns{FormID: f.ID(), Shown: []string{fs[2].ID, fs[0].ID}}); err != nil {
		t.Fatal(err)
	}
	if c := get(ana); !c.Saved || arrangement(c) != "+Colour +Name -Email " {
		t.Fatalf("saved: %s", arrangement(c))
	}
	if got := arrangement(get(bob)); got != "+Name +Email +Colour " {
		t.Fatalf("another person: %s", got)
	}

	// A field added later appears after the shown ones; a removed field is offered, hidden,
	// and can be shown.
	specs := []form.FieldSpec{{ID: fs[0].ID, Label: "Name", Type: "text"}, {ID: fs[2].ID, Label: "Colour", Type: "text"}, {Label: "Phone", Type: "text"}}
	if _, err := h.App.Commands.UpdateForm.Handle(apptest.As("wsp_a", apikey.ScopeAdmin), forms.UpdateForm{ID: f.ID(),
		Patch: form.Patch{Fields: &specs}}); err != nil {
		t.Fatal(err)
	}
	if got := arrangement(get(ana)); got != "+Colour +Name +Phone -removed:Email " {
		t.Fatalf("after adding Phone and removing Email: %s", got)
	}
	if _, err := h.App.Commands.SaveResponseColumns.Handle(ana, capture.SaveResponseColumns{FormID: f.ID(), Shown: []string{fs[1].ID, fs[0].ID}}); err != nil {
		t.Fatal(err)
	}
	if got := arrangement(get(ana)); got != "+removed:Email +Name -Colour -Phone " {
		t.Fatalf("a removed field shown: %s", got)
	}

	for _, shown := range [][]string{{"fld_unknown"}, {fs[0].ID, fs[0].ID}} {
		_, err := h.App.Commands.SaveResponseColumns.Handle(ana, capture.SaveResponseColumns{FormID: f.ID(), Shown: shown})
		var v *domain.ValidationError
		if !errors.As(err, &v) {
			t.Fatalf("saving %v: %v, want a validation error", shown, err)
		}
	}
	if _, err := h.App.Commands.SaveResponseColumns.Handle(ana, capture.SaveResponseColumns{FormID: "frm_other"}); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("another form: %v", err)
	}
	if _, err := h.App.Commands.SaveResponseColumns.Handle(asMember("wsp_b", "usr_ana", member.RoleOwner),
		capture.SaveResponseColumns{FormID: f.ID()}); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("a form of another workspace: %v", err)
	}
	if _, err := h.App.Commands.SaveResponseColumns.Handle(ana, capture.SaveResponseColumns{FormID: f.ID(), Reset: true}); err != nil {
		t.Fatal(err)
	}
	if c := get(ana); c.Saved || fmt.Sprint(len(c.Columns)) == "0" || !c.Columns[0].Shown {
		t.Fatalf("after Reset: %s", arrangement(c))
	}
	key := apptest.As("wsp_a", apikey.ScopeReadOnly)
	if _, err := h.App.Commands.SaveResponseColumns.Handle(key, capture.SaveResponseColumns{FormID: f.ID()}); err == nil {
		t.Fatal("an API key saved a column choice")
	}
	if c := get(key); c.Saved {
		t.Fatal("an API key has a choice")
	}
}
