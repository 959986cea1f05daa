package form_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/formward/formward/domain/form"
)

func TestApplyRemembersRemovedFields(t *testing.T) {
	f, ids := newForm(t,
		form.FieldSpec{Label: "Name", Type: "text"},
		form.FieldSpec{Label: "Colour", Type: "radio", Options: []string{"red", "blue"}},
		form.FieldSpec{Label: "CV", Type: "file"},
	)
	specs := func(keep ...form.Field) *[]form.FieldSpec {
		out := make([]form.FieldSpec, 0, len(keep))
		for _, fl := range keep {
			out = append(out, form.FieldSpec{ID: fl.ID, Label: fl.Label, Type: string(fl.Type), Options: fl.Options, Key: &fl.Key})
		}
		return &out
	}
	fields := f.Fields()

	// Reordering, relabelling and adding remove nothing.
	reordered := append(*specs(fields[2], fields[0], fields[1]), form.FieldSpec{Label: "Age", Type: "number"})
	if _, err := f.Apply(form.Patch{Fields: &reordered}, ids, form.DefaultLimits, t1); err != nil {
		t.Fatalf("reorder: %v", err)
	}
	if got := f.RemovedFields(); len(got) != 0 {
		t.Fatalf("a reorder remembered removed fields: %+v", got)
	}

	// Leaving two fields out remembers both, in their order on the form, with the time.
	t2 := t1.Add(time.Hour)
	now := f.Fields()
	if _, err := f.Apply(form.Patch{Fields: specs(now[2], now[3])}, ids, form.DefaultLimits, t2); err != nil {
		t.Fatalf("remove: %v", err)
	}
	want := []form.RemovedField{
		{ID: fields[2].ID, Key: fields[2].Key, Label: "CV", Type: form.TypeFile, RemovedAt: t2},
		{ID: fields[0].ID, Key: fields[0].Key, Label: "Name", Type: form.TypeText, RemovedAt: t2},
	}
	if got := f.RemovedFields(); !reflect.DeepEqual(got, want) {
		t.Fatalf("removed = %+v, want %+v", got, want)
	}
	if r, ok := f.RemovedField(fields[0].ID); !ok || r.Label != "Name" {
		t.Fatalf("RemovedField(%s) = %+v, %v", fields[0].ID, r, ok)
	}
	if _, ok := f.RemovedField(fields[1].ID); ok {
		t.Fatal("a current field is reported removed")
	}

	// A later removal adds to the list; a patch without fields or a refused patch leaves it.
	t3 := t2.Add(time.Hour)
	if _, err := f.Apply(form.Patch{Name: ptr("Renamed")}, ids, form.DefaultLimits, t3); err != nil {
		t.Fatalf("rename: %v", err)
	}
	bad := []form.FieldSpec{{Label: "", Type: "text"}}
	if _, err := f.Apply(form.Patch{Fields: &bad}, ids, form.DefaultLimits, t3); err == nil {
		t.Fatal("a field without a label was accepted")
	}
	if got := f.RemovedFields(); len(got) != 2 {
		t.Fatalf("removed after a rename and a refused patch = %+v", got)
	}
	if _, err := f.Apply(form.Patch{Fields: specs(f.Fields()[1])}, ids, form.DefaultLimits, t3); err != nil {
		t.Fatalf("remove again: %v", err)
	}
	got := f.RemovedFields()
	if len(got) != 3 || got[2].ID != fields[1].ID || got[2].Label != "Colour" || !got[2].RemovedAt.Equal(t3) {
		t.Fatalf("removed = %+v", got)
	}
	if af := got[0].AsField(); af.ID != fields[2].ID || af.Type != form.TypeFile || af.Label != "CV" {
		t.Fatalf("AsField = %+v", af)
	}

	// RemovedFields is a copy.
	got[0].Label = "changed"
	if f.RemovedFields()[0].Label != "CV" {
		t.Fatal("RemovedFields shares its slice with the form")
	}
}

func TestRemovedFieldsFromDatabase(t *testing.T) {
	f := form.UnmarshalWithSettingsFromDatabase("frm_1", "wsp_1", "Contact", nil, form.StatusDraft, nil, form.DefaultSettings(), t0, t0)
	at := time.Date(2024, 5, 3, 12, 0, 0, 0, time.FixedZone("x", 3600))
	f.WithRemovedFieldsFromDatabase([]form.RemovedField{{ID: "fld_9", Key: "q", Label: "Q", Type: form.TypeText, RemovedAt: at}})
	got := f.RemovedFields()
	if len(got) != 1 || got[0].ID != "fld_9" || got[0].RemovedAt.Location() != time.UTC || !got[0].RemovedAt.Equal(at) {
		t.Fatalf("removed = %+v", got)
	}
}
