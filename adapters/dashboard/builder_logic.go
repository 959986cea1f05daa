package dashboard

import (
	"encoding/json"
	"fmt"
	"html/template"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/formward/formward/domain/form"
)

// Display logic in the builder: a question's show_if is built from pickers (an earlier field
// by its label, the operator in words, a value from that field's options) and read back as a
// sentence ("Shown when Role is Student").

// operatorWords are the workflow operators as the builder says them.
var operatorWords = []selectOption{
	{Value: "equals", Label: "is"}, {Value: "not_equals", Label: "is not"}, {Value: "contains", Label: "contains"},
	{Value: "greater_than", Label: "is more than"}, {Value: "less_than", Label: "is less than"},
}

func operatorWord(op string) string {
	for _, o := range operatorWords {
		if o.Value == op {
			return o.Label
		}
	}
	return op
}

// maxConditionRows is how many conditions the pickers offer; the domain allows 20.
const maxConditionRows = 20

// logicSource is an earlier field a condition may test, with the values it offers.
type logicSource struct {
	ID, Label string
	// Values are the field's options (a yes/no box: checked, not checked); none: free text.
	Values []selectOption
	// ValuesJSON carries Values for the page's script, which swaps the value picker when the
	// field picker changes.
	ValuesJSON string
}

// sourceOption is an earlier field in a condition's field picker.
type sourceOption struct {
	selectOption
	ValuesJSON string
}

// logicRow is one condition's pickers as drawn (and as posted back, with its error).
type logicRow struct {
	N                         int
	FieldID, Operator, Value  string
	Sources                   []sourceOption
	Operators, Values         []selectOption
	Error                     string
	FieldLabel, OperatorLabel string
}

// logicForm is the display-logic part of a question's edit form.
type logicForm struct {
	On, Any bool
	Rows    []logicRow
	// None says no earlier field can be tested (the first question, or only files before it).
	None bool
}

// sourcesFor lists the fields a question's conditions may test: those before it on its page or
// an earlier one (hidden fields included), files excepted, as the domain rules.
func sourcesFor(specs []form.FieldSpec, id string) []logicSource {
	hidden, seq := layoutOf(specs)
	var out []logicSource
	add := func(s form.FieldSpec) {
		if s.Type == string(form.TypeFile) {
			return
		}
		src := logicSource{ID: s.ID, Label: s.Label}
		switch {
		case len(s.Options) > 0:
			for _, o := range s.Options {
				src.Values = append(src.Values, selectOption{Value: o, Label: o})
			}
		case s.Type == string(form.TypeCheckbox):
			src.Values = []selectOption{{Value: "true", Label: "checked"}, {Value: "false", Label: "not checked"}}
		}
		pairs := make([][2]string, len(src.Values))
		for i, v := range src.Values {
			pairs[i] = [2]string{v.Value, v.Label}
		}
		b, _ := json.Marshal(pairs)
		src.ValuesJSON = string(b)
		out = append(out, src)
	}
	for _, s := range hidden {
		if s.ID != id {
			add(s)
		}
	}
	for _, s := range seq {
		if s == nil {
			continue
		}
		if s.ID == id {
			break
		}
		add(*s)
	}
	return out
}

// logicFormOf draws a question's rule as pickers, plus one empty row to add a condition.
func logicFormOf(rule *form.ShowIfSpec, sources []logicSource, errs map[string]string) logicForm {
	lf := logicForm{None: len(sources) == 0}
	var conds []form.ConditionSpec
	if rule != nil {
		lf.On, lf.Any = true, rule.Match == "any"
		conds = rule.Conditions
	}
	for n := 0; n <= len(conds) && n < maxConditionRows; n++ {
		r := logicRow{N: n, Operator: "equals"}
		if n < len(conds) {
			r.FieldID, r.Operator, r.Value = conds[n].FieldID, conds[n].Operator, conditionText(conds[n].Value)
		}
		r.Error = errs[fmt.Sprintf("cond_%d", n)]
		var chosen *logicSource
		for i, s := range sources {
			sel := s.ID == r.FieldID
			if sel {
				chosen, r.FieldLabel = &sources[i], s.Label
			}
			r.Sources = append(r.Sources, sourceOption{selectOption{Value: s.ID, Label: s.Label, Selected: sel}, s.ValuesJSON})
		}
		for _, o := range operatorWords {
			o.Selected = o.Value == r.Operator
			r.Operators = append(r.Operators, o)
		}
		r.OperatorLabel = operatorWord(r.Operator)
		if chosen != nil && len(chosen.Values) > 0 && r.Operator != "greater_than" && r.Operator != "less_than" {
			for _, v := range chosen.Values {
				v.Selected = v.Value == r.Value
				r.Values = append(r.Values, v)
			}
		}
		lf.Rows = append(lf.Rows, r)
	}
	return lf
}

// conditionText is a condition's value as a picker holds it.
func conditionText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}

// logicOf reads the pickers back into a rule: logic=when turns it on; rows without a field are
// left out. A value is sent as the tested field holds it: a number for a number field, true or
// false for a yes/no box, text otherwise, so the domain checks it like an API client's.
func logicOf(c *gin.Context, specs []form.FieldSpec) *form.ShowIfSpec {
	if c.PostForm("logic") != "when" {
		return nil
	}
	rule := &form.ShowIfSpec{Match: "all"}
	if c.PostForm("match") == "any" {
		rule.Match = "any"
	}
	for n := 0; n < maxConditionRows; n++ {
		id := strings.TrimSpace(c.PostForm(fmt.Sprintf("cf_%d", n)))
		if id == "" {
			continue
		}
		cs := form.ConditionSpec{FieldID: id, Operator: c.PostForm(fmt.Sprintf("co_%d", n)), HasValue: true}
		v := strings.TrimSpace(c.PostForm(fmt.Sprintf("cv_%d", n)))
		cs.Value = v
		if i := fieldAt(specs, id); i >= 0 {
			switch s := specs[i]; {
			case s.Type == string(form.TypeNumber) && v != "":
				if _, err := strconv.ParseFloat(v, 64); err == nil {
					cs.Value = json.Number(v)
				}
			case s.Type == string(form.TypeCheckbox) && len(s.Options) == 0 && (v == "true" || v == "false"):
				cs.Value = v == "true"
			}
		}
		rule.Conditions = append(rule.Conditions, cs)
	}
	return rule
}

// logicSentence reads a rule in words, the field and the value emphasised: "Shown when *Role*
// is *Student* and *Age* is more than *17*".
func logicSentence(rule *form.ShowIfSpec, specs []form.FieldSpec) template.HTML {
	if rule == nil || len(rule.Conditions) == 0 {
		return ""
	}
	em := func(s string) string { return "<em>" + template.HTMLEscapeString(s) + "</em>" }
	parts := make([]string, 0, len(rule.Conditions))
	for _, cs := range rule.Conditions {
		label, v := cs.FieldID, conditionText(cs.Value)
		if i := fieldAt(specs, cs.FieldID); i >= 0 {
			label = specs[i].Label
			if specs[i].Type == string(form.TypeCheckbox) && len(specs[i].Options) == 0 {
				parts = append(parts, em(label)+map[bool]string{true: " is checked", false: " is not checked"}[(v == "true") == (cs.Operator != "not_equals")])
				continue
			}
		}
		parts = append(parts, em(label)+" "+operatorWord(cs.Operator)+" "+em(v))
	}
	join := " and "
	if rule.Match == "any" {
		join = " or "
	}
	return template.HTML("Shown when " + strings.Join(parts, join)) // #nosec G203 -- every part escaped above
}
