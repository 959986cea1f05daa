package form_test

import (
	"reflect"
	"testing"

	"github.com/formward/formward/domain/form"
)

func TestDiffFieldsNamesWhatChanged(t *testing.T) {
	help := "As on your passport"
	before := []form.Field{
		{ID: "fld_name", Key: "name", Label: "Name", Type: form.TypeText, Page: 1},
		{ID: "fld_plan", Key: "plan", Label: "Plan", Type: form.TypeRadio, Options: []string{"Free", "Pro"}, Page: 1},
		{ID: "fld_age", Key: "age", Label: "Age", Type: form.TypeNumber, Page: 1},
		{ID: "fld_gone", Key: "gone", Label: "Fax", Type: form.TypeText, Page: 1},
	}
	after := []form.Field{
		{ID: "fld_plan", Key: "plan", Label: "Plan", Type: form.TypeRadio, Options: []string{"Pro", "Team"}, Page: 1,
			ShowIf: &form.ShowIf{Conditions: []form.Condition{{FieldID: "fld_name", Operator: "equals", Value: "x", Kind: "string"}}}},
		{ID: "fld_name", Key: "name", Label: "Full name", Type: form.TypeText, Page: 1},
		{ID: "fld_age", Key: "age", Label: "Age", Type: form.TypeText, Required: true, Help: &help, Page: 2},
		{ID: "fld_new", Key: "email", Label: "Email", Type: form.TypeEmail, Page: 2},
	}
	d := form.DiffFields(before, after)
	if !d.Reordered || d.Unchanged != 0 || d.Empty() {
		t.Fatalf("reordered %v, unchanged %d", d.Reordered, d.Unchanged)
	}
	type got struct {
		ID               string
		Aspects          []string
		Added, Removed   bool
		OptsIn, OptsOut  []string
		Relabelled, Kept bool
	}
	var out []got
	for _, c := range d.Changes {
		out = append(out, got{ID: c.Field().ID, Aspects: c.Aspects, Added: c.Added(), Removed: c.Removed(),
			OptsIn: c.OptionsAdded, OptsOut: c.OptionsRemoved, Relabelled: c.Relabelled()})
	}
	want := []got{
		{ID: "fld_plan", Aspects: []string{"options", "logic"}, OptsIn: []string{"Team"}, OptsOut: []string{"Free"}},
		{ID: "fld_name", Aspects: []string{"label"}, Relabelled: true},
		{ID: "fld_age", Aspects: []string{"type", "required", "help", "page"}},
		{ID: "fld_new", Added: true},
		{ID: "fld_gone", Removed: true},
	}
	if !reflect.DeepEqual(out, want) {
		t.Fatalf("changes:\n got %+v\nwant %+v", out, want)
	}
	if a, r, rl, c := d.Count(); a != 1 || r != 1 || rl != 1 || c != 2 {
		t.Fatalf("count: %d added, %d removed, %d relabelled, %d changed", a, r, rl, c)
	}
}

func TestDiffFieldsOfTheSameListIsEmpty(t *testing.T) {
	fields := []form.Field{{ID: "fld_a", Key: "a", Label: "A", Type: form.TypeText, Page: 1}, {ID: "fld_b", Key: "b", Label: "B", Type: form.TypeText, Page: 1}}
	d := form.DiffFields(fields, append([]form.Field(nil), fields...))
	if !d.Empty() || d.Unchanged != 2 {
		t.Fatalf("diff of equal lists: %+v", d)
	}
	moved := form.DiffFields(fields, []form.Field{fields[1], fields[0]})
	if moved.Empty() || !moved.Reordered || len(moved.Changes) != 0 {
		t.Fatalf("a move alone: %+v", moved)
	}
	empty := ""
	withEmptyHelp := []form.Field{fields[0], fields[1]}
	withEmptyHelp[0].Help = &empty
	if d := form.DiffFields(fields, withEmptyHelp); !d.Empty() {
		t.Fatalf("an empty help is no help: %+v", d)
	}
}
