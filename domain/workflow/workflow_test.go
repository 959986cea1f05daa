package workflow

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/submission"
)

var now = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func ids() func() string {
	n := 0
	return func() string { n++; return fmt.Sprintf("act_%d", n) }
}

func noCheck(string, map[string]any) []domain.Violation { return nil }

func draft() Draft {
	return Draft{Name: "Leads", FormID: "frm_1",
		Trigger: TriggerSpec{Type: "submission.created"},
		Actions: []ActionSpec{{Type: "send_email", Config: map[string]any{"to": "a@b.co"}}}}
}

func fields(err error) map[string]string {
	var ve *domain.ValidationError
	out := map[string]string{}
	if errors.As(err, &ve) {
		for _, v := range ve.Violations {
			out[v.Field] = v.Code
		}
	}
	return out
}

func TestNewBuildsEnabledWorkflow(t *testing.T) {
	w, err := New("wfl_1", "wsp_1", draft(), ids(), noCheck, DefaultLimits, now)
	if err != nil {
		t.Fatal(err)
	}
	if !w.Enabled() || w.Name() != "Leads" || w.FormID() != "frm_1" || w.Trigger().Type != event.SubmissionCreated {
		t.Fatalf("unexpected workflow %+v", w)
	}
	if a := w.Actions(); len(a) != 1 || a[0].ID != "act_1" || a[0].Config["to"] != "a@b.co" {
		t.Fatalf("actions %+v", a)
	}
	if w.Trigger().Conditions != nil {
		t.Fatal("no conditions given must stay nil")
	}
}

func TestNewRules(t *testing.T) {
	lim := Limits{MaxActions: 2, MaxConditions: 1}
	cases := []struct {
		name  string
		edit  func(*Draft)
		field string
		code  string
	}{
		{"name empty", func(d *Draft) { d.Name = "  " }, "name", "invalid_length"},
		{"name long", func(d *Draft) { d.Name = strings.Repeat("n", 201) }, "name", "invalid_length"},
		{"form missing", func(d *Draft) { d.FormID = "" }, "form_id", "required"},
		{"trigger type missing", func(d *Draft) { d.Trigger.Type = "" }, "trigger.type", "required"},
		{"trigger type bad", func(d *Draft) { d.Trigger.Type = "form.published" }, "trigger.type", "invalid_value"},
		{"too many conditions", func(d *Draft) {
			d.Trigger.Conditions = []ConditionSpec{{FieldID: "a", Operator: "equals", Value: "x", HasValue: true}, {FieldID: "b", Operator: "equals", Value: "x", HasValue: true}}
		}, "trigger.config.conditions", "too_many"},
		{"condition operator", func(d *Draft) {
			d.Trigger.Conditions = []ConditionSpec{{FieldID: "a", Operator: "like", Value: "x", HasValue: true}}
		}, "trigger.config.conditions[0].operator", "invalid_value"},
		{"condition operator missing", func(d *Draft) {
			d.Trigger.Conditions = []ConditionSpec{{FieldID: "a", Value: "x", HasValue: true}}
		}, "trigger.config.conditions[0].operator", "required"},
		{"condition field", func(d *Draft) {
			d.Trigger.Conditions = []ConditionSpec{{Operator: "equals", Value: "x", HasValue: true}}
		}, "trigger.config.conditions[0].field_id", "required"},
		{"condition value missing", func(d *Draft) {
			d.Trigger.Conditions = []ConditionSpec{{FieldID: "a", Operator: "equals"}}
		}, "trigger.config.conditions[0].value", "required"},
		{"condition value object", func(d *Draft) {
			d.Trigger.Conditions = []ConditionSpec{{FieldID: "a", Operator: "equals", Value: map[string]any{}, HasValue: true}}
		}, "trigger.config.conditions[0].value", "invalid_type"},
		{"condition value null", func(d *Draft) {
			d.Trigger.Conditions = []ConditionSpec{{FieldID: "a", Operator: "equals", Value: nil, HasValue: true}}
		}, "trigger.config.conditions[0].value", "invalid_type"},
		{"actions missing", func(d *Draft) { d.Actions = nil }, "actions", "required"},
		{"too many actions", func(d *Draft) { d.Actions = append(d.Actions, d.Actions[0], d.Actions[0]) }, "actions", "too_many"},
		{"action type", func(d *Draft) { d.Actions[0].Type = "" }, "actions[0].type", "required"},
		{"action config", func(d *Draft) { d.Actions[0].Config = nil }, "actions[0].config", "required"},
		{"action id unknown", func(d *Draft) { d.Actions[0].ID = "act_x" }, "actions[0].id", "unknown_action"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := draft()
			c.edit(&d)
			_, err := New("wfl_1", "wsp_1", d, ids(), noCheck, lim, now)
			if got := fields(err)[c.field]; got != c.code {
				t.Fatalf("want %s %s, got %v", c.field, c.code, err)
			}
		})
	}
}

func TestValidatorPathsArePrefixed(t *testing.T) {
	check := func(typ string, cfg map[string]any) []domain.Violation {
		if typ != "send_email" {
			return []domain.Violation{{Field: "type", Code: "invalid_value", Message: "unknown"}}
		}
		return []domain.Violation{{Field: "config.subject", Code: "required", Message: "subject is required"}}
	}
	d := draft()
	d.Actions = append(d.Actions, ActionSpec{Type: "fax", Config: map[string]any{}})
	_, err := New("wfl_1", "wsp_1", d, ids(), check, DefaultLimits, now)
	got := fields(err)
	if got["actions[0].config.subject"] != "required" || got["actions[1].type"] != "invalid_value" {
		t.Fatalf("got %v", got)
	}
}

func TestApply(t *testing.T) {
	d := draft()
	d.Actions = []ActionSpec{
		{Type: "send_webhook", Config: map[string]any{"url": "https://x", "secret": "s3"}},
		{Type: "send_email", Config: map[string]any{"to": "a@b.co"}},
	}
	w, err := New("wfl_1", "wsp_1", d, ids(), noCheck, DefaultLimits, now)
	if err != nil {
		t.Fatal(err)
	}
	off := false
	name := "Renamed"
	later := now.Add(time.Hour)
	acts := []ActionSpec{
		{ID: "act_2", Type: "send_email", Config: map[string]any{"to": "c@d.co"}},
		{ID: "act_1", Type: "send_webhook", Config: map[string]any{"url": "https://y", "secret_set": true}},
		{Type: "chat_message", Config: map[string]any{"channel": "#x"}},
	}
	newIDs := func() string { return "act_new" }
	if err := w.Apply(Patch{Name: &name, Enabled: &off, Actions: &acts}, newIDs, noCheck, DefaultLimits, later); err != nil {
		t.Fatal(err)
	}
	a := w.Actions()
	if w.Enabled() || w.Name() != "Renamed" || !w.UpdatedAt().Equal(later) {
		t.Fatal("name/enabled/updated_at not applied")
	}
	if a[0].ID != "act_2" || a[1].ID != "act_1" || a[2].ID == "" || a[2].ID == "act_2" {
		t.Fatalf("ids %+v", a)
	}
	if a[1].Config["secret"] != "s3" || a[1].Config["secret_set"] != nil {
		t.Fatalf("kept action must keep its secret: %+v", a[1].Config)
	}
	if pc := a[1].PublicConfig(); pc["secret_set"] != true || pc["secret"] != nil {
		t.Fatalf("public config %+v", pc)
	}
	clear := []ActionSpec{{ID: "act_1", Type: "send_webhook", Config: map[string]any{"url": "https://y", "secret": nil}}}
	if err := w.Apply(Patch{Actions: &clear}, ids(), noCheck, DefaultLimits, later); err != nil {
		t.Fatal(err)
	}
	if _, ok := w.Actions()[0].Config["secret"]; ok {
		t.Fatal("secret: null must clear the secret")
	}
	bad := []ActionSpec{{ID: "act_9", Type: "send_email", Config: map[string]any{}}}
	before := w.Name()
	empty := ""
	if err := w.Apply(Patch{Name: &empty, Actions: &bad}, ids(), noCheck, DefaultLimits, later); fields(err)["actions[0].id"] != "unknown_action" {
		t.Fatalf("want unknown id, got %v", err)
	}
	if w.Name() != before {
		t.Fatal("a failed apply must change nothing")
	}
	trig := TriggerSpec{Type: "submission.updated"}
	if err := w.Apply(Patch{Trigger: &trig}, ids(), noCheck, DefaultLimits, later); err != nil || w.Trigger().Type != event.SubmissionUpdated {
		t.Fatalf("trigger not replaced: %v", err)
	}
}

func cond(op string, v any) Condition {
	c, vs := parseCondition("c", ConditionSpec{FieldID: "f", Operator: op, Value: v, HasValue: true})
	if len(vs) > 0 {
		panic(fmt.Sprint(vs))
	}
	return c
}

func TestConditionValues(t *testing.T) {
	if c := cond("equals", json.Number("1000.50")); c.Value != "1000.5" || c.Kind != KindNumber {
		t.Fatalf("%+v", c)
	}
	if c := cond("equals", true); c.Value != "true" || c.Kind != KindBoolean {
		t.Fatalf("%+v", c)
	}
	if c := cond("equals", submission.Number("2")); c.Value != "2" || c.Kind != KindNumber {
		t.Fatalf("%+v", c)
	}
	if c := cond("equals", "x"); c.Value != "x" || c.Kind != KindString {
		t.Fatalf("%+v", c)
	}
}

func TestConditionOperators(t *testing.T) {
	one := submission.Single
	list := func(s ...string) submission.Value { return submission.List(s) }
	cases := []struct {
		name    string
		op      string
		value   any
		v       submission.Value
		present bool
		want    bool
	}{
		{"equals string", "equals", "Sales", one("Sales"), true, true},
		{"equals string case", "equals", "sales", one("Sales"), true, false},
		{"equals numeric", "equals", json.Number("1000"), one("1000.0"), true, true},
		{"equals numeric string value", "equals", "1e3", one("1000"), true, true},
		{"equals bool", "equals", true, one("true"), true, true},
		{"equals array of one", "equals", "a", list("a"), true, true},
		{"equals array of two", "equals", "a", list("a", "b"), true, false},
		{"not_equals differs", "not_equals", "a", one("b"), true, true},
		{"not_equals same", "not_equals", "a", one("a"), true, false},
		{"not_equals numeric same", "not_equals", json.Number("5"), one("5.00"), true, false},
		{"not_equals array", "not_equals", "a", list("a", "b"), true, true},
		{"contains substring", "contains", "acme", one("team@acme.io"), true, true},
		{"contains no", "contains", "zzz", one("team@acme.io"), true, false},
		{"contains member", "contains", "b", list("a", "b"), true, true},
		{"contains not member", "contains", "x", list("ab", "b"), true, false},
		{"contains no substring of member", "contains", "a", list("ab"), true, false},
		{"greater numeric", "greater_than", json.Number("1000"), one("1500"), true, true},
		{"greater numeric not lexical", "greater_than", json.Number("1000"), one("900"), true, false},
		{"greater equal", "greater_than", json.Number("1000"), one("1000"), true, false},
		{"less numeric", "less_than", json.Number("10"), one("9.5"), true, true},
		{"less numeric no", "less_than", json.Number("10"), one("10"), true, false},
		{"greater date", "greater_than", "2024-01-31", one("2024-02-01"), true, true},
		{"less date", "less_than", "2024-01-31", one("2023-12-31"), true, true},
		{"less date no", "less_than", "2024-01-31", one("2024-01-31"), true, false},
		{"greater text", "greater_than", "b", one("c"), true, false},
		{"greater number vs date", "greater_than", json.Number("5"), one("2024-01-01"), true, false},
		{"greater array", "greater_than", json.Number("1"), list("5"), true, false},
		{"missing equals", "equals", "", submission.Value{}, false, false},
		{"missing contains", "contains", "a", submission.Value{}, false, false},
		{"missing greater", "greater_than", json.Number("0"), submission.Value{}, false, false},
		{"missing not_equals", "not_equals", "a", submission.Value{}, false, true},
		{"empty string is missing", "equals", "", one(""), true, false},
		{"empty list is missing", "not_equals", "a", list(), true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := cond(c.op, c.value).Holds(c.v, c.present); got != c.want {
				t.Fatalf("want %v", c.want)
			}
		})
	}
}

func TestMatches(t *testing.T) {
	d := draft()
	d.Trigger.Conditions = []ConditionSpec{
		{FieldID: "budget", Operator: "greater_than", Value: json.Number("1000"), HasValue: true},
		{FieldID: "team", Operator: "contains", Value: "sales", HasValue: true},
	}
	w, err := New("wfl_1", "wsp_1", d, ids(), noCheck, DefaultLimits, now)
	if err != nil {
		t.Fatal(err)
	}
	e := event.Event{Type: event.SubmissionCreated, WorkspaceID: "wsp_1", FormID: "frm_1", OccurredAt: now,
		Data: map[string]any{"submission_id": "sub_1", "fields": map[string]any{"budget": "1500", "team": []string{"sales", "ops"}}}}
	vals := FieldValues(e)
	before := e
	before.OccurredAt = now.Add(-time.Second)
	if w.Matches(before, vals) {
		t.Fatal("an event from before the workflow was enabled must not match")
	}
	if !w.Matches(e, vals) {
		t.Fatal("should match")
	}
	low := map[string]submission.Value{"budget": submission.Single("10"), "team": submission.List([]string{"sales"})}
	if w.Matches(e, low) {
		t.Fatal("a failing condition must not match")
	}
	for name, e2 := range map[string]event.Event{
		"other type":      {Type: event.SubmissionUpdated, WorkspaceID: "wsp_1", FormID: "frm_1"},
		"other form":      {Type: event.SubmissionCreated, WorkspaceID: "wsp_1", FormID: "frm_2"},
		"other workspace": {Type: event.SubmissionCreated, WorkspaceID: "wsp_2", FormID: "frm_1"},
	} {
		if w.Matches(e2, vals) {
			t.Fatal(name + " must not match")
		}
	}
	off, on := false, true
	_ = w.Apply(Patch{Enabled: &off}, ids(), noCheck, DefaultLimits, now)
	if w.Matches(e, vals) {
		t.Fatal("disabled must not match")
	}
	_ = w.Apply(Patch{Enabled: &on}, ids(), noCheck, DefaultLimits, now.Add(time.Minute))
	if w.Matches(e, vals) {
		t.Fatal("an event of the disabled time must not match after re-enabling")
	}
	e.OccurredAt = now.Add(2 * time.Minute)
	if !w.Matches(e, vals) {
		t.Fatal("an event after re-enabling must match")
	}
}

func TestRender(t *testing.T) {
	vars := TemplateVars(map[string]submission.Value{
		"fld_name": submission.Single("<Ann & Bo>"),
		"fld_tags": submission.List([]string{"a", "b"}),
	}, "sub_1", "frm_1", "Leads", now)
	cases := []struct {
		tpl  string
		html bool
		want string
	}{
		{"Hi {{fld_name}}", false, "Hi <Ann & Bo>"},
		{"<b>{{fld_name}}</b>", true, "<b>&lt;Ann &amp; Bo&gt;</b>"},
		{"{{ fld_tags }}|{{nope}}|{{submission_id}} {{form_id}} {{form_name}} {{submitted_at}}", false, "a, b||sub_1 frm_1 Leads 2026-01-02T03:04:05.000Z"},
		{"open {{ only", false, "open {{ only"},
		{"no vars", false, "no vars"},
	}
	for _, c := range cases {
		if got := Render(c.tpl, vars, c.html); got != c.want {
			t.Errorf("Render(%q) = %q, want %q", c.tpl, got, c.want)
		}
	}
}
