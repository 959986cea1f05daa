package workflow

import (
	"strings"
	"testing"
)

// TestTextRules: a workflow's texts (name, form_id, condition field and value, action type and
// every string of an action's config, keys included) refuse control characters at their path.
func TestTextRules(t *testing.T) {
	nul := "a\x00b"
	for _, c := range []struct {
		name string
		mod  func(*Draft)
		path string
	}{
		{"name", func(d *Draft) { d.Name = nul }, "name"},
		{"name escape", func(d *Draft) { d.Name = "\x1b[2J" }, "name"},
		{"form_id", func(d *Draft) { d.FormID = nul }, "form_id"},
		{"condition field", func(d *Draft) {
			d.Trigger.Conditions = []ConditionSpec{{FieldID: nul, Operator: "equals", Value: "x", HasValue: true}}
		}, "trigger.config.conditions[0].field_id"},
		{"condition value", func(d *Draft) {
			d.Trigger.Conditions = []ConditionSpec{{FieldID: "fld_1", Operator: "equals", Value: nul, HasValue: true}}
		}, "trigger.config.conditions[0].value"},
		{"action type", func(d *Draft) { d.Actions[0].Type = nul }, "actions[0].type"},
		{"config value", func(d *Draft) { d.Actions[0].Config["subject"] = nul }, "actions[0].config.subject"},
		{"nested config value", func(d *Draft) {
			d.Actions[0].Config["row_mapping"] = map[string]any{"A": nul}
		}, "actions[0].config.row_mapping.A"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := draft()
			c.mod(&d)
			_, err := New("wfl_1", "wsp_1", d, ids(), noCheck, DefaultLimits, now)
			if got := fields(err)[c.path]; got != "invalid_value" {
				t.Fatalf("%s: %q, want invalid_value; err %v", c.path, got, err)
			}
		})
	}
	w, err := New("wfl_1", "wsp_1", draft(), ids(), noCheck, DefaultLimits, now)
	if err != nil {
		t.Fatal(err)
	}
	bad := nul
	if err := w.Apply(Patch{Name: &bad}, ids(), noCheck, DefaultLimits, now); fields(err)["name"] != "invalid_value" {
		t.Fatalf("Apply name: %v", err)
	}
	if w.Name() != "Leads" {
		t.Fatal("a refused patch changed the name")
	}
	long := strings.Repeat("x", 10001)
	d := draft()
	d.Trigger.Conditions = []ConditionSpec{{FieldID: "fld_1", Operator: "contains", Value: long, HasValue: true}}
	if _, err := New("wfl_1", "wsp_1", d, ids(), noCheck, DefaultLimits, now); fields(err)["trigger.config.conditions[0].value"] != "too_long" {
		t.Fatalf("long condition value: %v", err)
	}
}

func TestCheckConditionFields(t *testing.T) {
	d := draft()
	d.Trigger.Conditions = []ConditionSpec{
		{FieldID: "fld_1", Operator: "equals", Value: "x", HasValue: true},
		{FieldID: "fld_other_workspace", Operator: "equals", Value: "x", HasValue: true},
	}
	w, err := New("wfl_1", "wsp_1", d, ids(), noCheck, DefaultLimits, now)
	if err != nil {
		t.Fatal(err)
	}
	ofForm := func(id string) bool { return id == "fld_1" }
	got := fields(w.CheckConditionFields(ofForm))
	if len(got) != 1 || got["trigger.config.conditions[1].field_id"] != "unknown_field" {
		t.Fatalf("violations %v", got)
	}
	if err := w.CheckConditionFields(func(string) bool { return true }); err != nil {
		t.Fatalf("known fields refused: %v", err)
	}
}
