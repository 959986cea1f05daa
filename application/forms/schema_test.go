package forms_test

import (
	"context"
	"errors"
	"testing"

	"github.com/formward/formward/application/apptest"
	"github.com/formward/formward/application/forms"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/apikey"
	"github.com/formward/formward/domain/form"
)

func TestGetVersionSchema(t *testing.T) {
	h := apptest.New()
	f := h.CreateForm(t, "wsp_a",
		form.FieldSpec{Label: "Name", Type: "text", Required: true},
		form.FieldSpec{Label: "Colour", Type: "dropdown", Options: []string{"Red", "Blue"}})
	const url = "https://forms.example.com/v1/forms/x/versions/1/schema"
	read := apptest.As("wsp_a", apikey.ScopeReadOnly)
	s, err := h.App.Queries.GetVersionSchema.Handle(read, forms.GetVersionSchema{FormID: f.ID(), Version: 1, SchemaURL: url})
	if err != nil {
		t.Fatalf("read-only key: %v", err)
	}
	props, _ := s["properties"].(map[string]any)
	if s["$id"] != url || len(props) != 2 || props[f.Fields()[0].ID] == nil {
		t.Fatalf("schema = %v", s)
	}
	for name, c := range map[string]struct {
		ctx context.Context
		q   forms.GetVersionSchema
	}{
		"version 2":       {read, forms.GetVersionSchema{FormID: f.ID(), Version: 2}},
		"version 0":       {read, forms.GetVersionSchema{FormID: f.ID(), Version: 0}},
		"other workspace": {apptest.As("wsp_b", apikey.ScopeAdmin), forms.GetVersionSchema{FormID: f.ID(), Version: 1}},
		"unknown form":    {read, forms.GetVersionSchema{FormID: "frm_nope", Version: 1}},
	} {
		if _, err := h.App.Queries.GetVersionSchema.Handle(c.ctx, c.q); !errors.Is(err, domain.ErrNotFound) {
			t.Errorf("%s: err = %v, want not found", name, err)
		}
	}
	if _, err := h.App.Queries.GetVersionSchema.Handle(context.Background(), forms.GetVersionSchema{FormID: f.ID(), Version: 1}); err == nil {
		t.Error("no principal: schema served")
	}
}
