package forms

import (
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/form"
)

func TestFormChangeOfLogoAndSettings(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	n := 0
	newID := func() string { n++; return "fld_" + strconv.Itoa(n) }
	f, err := form.New("frm_1", "wsp_1", form.Draft{Name: "Contact", Fields: []form.FieldSpec{{Label: "A", Type: "text"}, {Label: "B", Type: "text"}}},
		newID, form.DefaultLimits, now)
	if err != nil {
		t.Fatal(err)
	}

	before := *f
	logo := form.Logo{Key: "wsp_1/frm_1/logo-1", ContentType: "image/png", Size: 10, Width: 3, Height: 3, Version: "v1"}
	if _, err := f.SetLogo(&logo, now); err != nil {
		t.Fatal(err)
	}
	action, details, changed := formChange(&before, f)
	if !changed || action != audit.FormUpdated || !reflect.DeepEqual(details["changed"], []string{"logo"}) {
		t.Fatalf("logo set: %v %v %v", action, details, changed)
	}

	before = *f
	s := f.Settings()
	s.Spam.Honeypot = !s.Spam.Honeypot
	if _, err := f.Apply(form.Patch{Settings: &s}, newID, form.DefaultLimits, now); err != nil {
		t.Fatal(err)
	}
	if _, details, changed := formChange(&before, f); !changed || !reflect.DeepEqual(details["changed"], []string{"settings"}) {
		t.Fatalf("settings: %v %v", details, changed)
	}

	// Reordering the questions changes the fields, though none was added, removed or edited.
	before = *f
	fs := f.Fields()
	order := []form.FieldSpec{{ID: fs[1].ID, Label: fs[1].Label, Type: string(fs[1].Type)}, {ID: fs[0].ID, Label: fs[0].Label, Type: string(fs[0].Type)}}
	if _, err := f.Apply(form.Patch{Fields: &order}, newID, form.DefaultLimits, now); err != nil {
		t.Fatal(err)
	}
	_, details, changed = formChange(&before, f)
	if !changed || !reflect.DeepEqual(details["changed"], []string{"fields"}) || details["fields_added"] != 0 || details["fields_removed"] != 0 {
		t.Fatalf("reorder: %v %v", details, changed)
	}
	if _, _, changed := formChange(f, f); changed {
		t.Fatal("a form compared with itself changed")
	}
}
