package form

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/text"
)

// ShowIf is a field's display rule: the field is shown only when all (or any) of the
// conditions hold of the answers to earlier fields.
type ShowIf struct {
	// Any is true for "match": "any", false for "all".
	Any        bool
	Conditions []Condition
}

// Match is the rule's match as the API names it: "all" or "any".
func (s ShowIf) Match() string {
	if s.Any {
		return "any"
	}
	return "all"
}

// Condition tests one earlier field's answer; the operators are the workflow ones (equals,
// not_equals, contains, greater_than, less_than). Value is kept in canonical string form and
// Kind ("string", "number", "boolean") says how the client gave it.
type Condition struct {
	FieldID  string
	Operator string
	Value    string
	Kind     string
}

// ShowIfSpec is a display rule as a client sent it.
type ShowIfSpec struct {
	Match      string
	Conditions []ConditionSpec
}

// ConditionSpec is a condition as a client sent it. FieldID names an earlier field by ID or
// by key (a new field has no ID yet); Value is a string, bool or number (float64, int,
// json.Number or a numeric type whose String gives its digits).
type ConditionSpec struct {
	FieldID  string
	Operator string
	Value    any
	HasValue bool
}

// maxConditions bounds one rule; maxConditionValue one condition's string value.
const (
	maxConditions     = 20
	maxConditionValue = 10000
)

// Answer is a field's canonical answer as the rules test it: one string, or a list.
type Answer struct {
	Items []string
	List  bool
}

// buildLogic checks the pages and display rules of fields already built (IDs and keys set).
func buildLogic(vs *domain.Violations, specs []FieldSpec, out []Field) {
	last := 1
	for i, s := range specs {
		out[i].Page = 1
		if s.Page != nil {
			if *s.Page < 1 || *s.Page > DefaultLimits.MaxFields {
				vs.Add(fmt.Sprintf("fields[%d].page", i), "invalid_value", fmt.Sprintf("page must be 1 to %d", DefaultLimits.MaxFields))
			} else {
				out[i].Page = *s.Page
			}
		}
		if out[i].Page > last {
			last = out[i].Page
		}
	}
	index := make(map[string]int, 2*len(out))
	for i, f := range out {
		index[f.ID] = i
	}
	for i, f := range out {
		if _, dup := index[f.Key]; !dup && f.Key != "" {
			index[f.Key] = i
		}
	}
	checkPages(vs, out, last)
	for i, s := range specs {
		if out[i].Type == TypeFile && out[i].Page != last {
			vs.Add(fmt.Sprintf("fields[%d].page", i), "invalid_value", "file fields must be on the form's last page: uploads cannot be carried from page to page")
		}
		if s.ShowIf == nil {
			continue
		}
		out[i].ShowIf = parseShowIf(vs, fmt.Sprintf("fields[%d].show_if", i), *s.ShowIf, i, out, index)
	}
}

// checkPages refuses a page that no question is on: pages run 1, 2, … last without a gap, and
// each has a field respondents see (hidden fields fill from the URL and are on no page of
// their own).
func checkPages(vs *domain.Violations, fields []Field, last int) {
	if last < 2 {
		return
	}
	asked := make([]bool, last+1)
	for _, f := range fields {
		if !f.Hidden {
			asked[f.Page] = true
		}
	}
	for p := 1; p <= last; p++ {
		if !asked[p] {
			vs.Add("fields", "invalid_value", fmt.Sprintf("page %d has no questions: every page from 1 to %d needs a question respondents see", p, last))
		}
	}
}

func parseShowIf(vs *domain.Violations, path string, s ShowIfSpec, self int, fields []Field, index map[string]int) *ShowIf {
	rule := &ShowIf{}
	switch s.Match {
	case "all", "":
	case "any":
		rule.Any = true
	default:
		vs.Add(path+".match", "invalid_value", "match must be all or any")
	}
	if len(s.Conditions) == 0 || len(s.Conditions) > maxConditions {
		vs.Add(path+".conditions", "invalid_length", fmt.Sprintf("conditions must hold 1 to %d conditions", maxConditions))
	}
	for j, cs := range s.Conditions {
		at := fmt.Sprintf("%s.conditions[%d]", path, j)
		c := Condition{Operator: cs.Operator}
		ref := strings.TrimSpace(cs.FieldID)
		k, ok := index[ref]
		switch {
		case ref == "":
			vs.Add(at+".field_id", "required", "field_id is required")
		case !ok:
			vs.Add(at+".field_id", "unknown_field", "field "+ref+" is not a field of this form")
		case k >= self || fields[k].Page > fields[self].Page:
			vs.Add(at+".field_id", "invalid_value", "a condition may only test an earlier field (before this one, on the same or an earlier page)")
		case fields[k].Type == TypeFile:
			vs.Add(at+".field_id", "invalid_value", "a condition cannot test a file field")
		default:
			c.FieldID = fields[k].ID
		}
		switch cs.Operator {
		case "equals", "not_equals", "contains", "greater_than", "less_than":
		case "":
			vs.Add(at+".operator", "required", "operator is required")
		default:
			vs.Add(at+".operator", "invalid_value", "operator must be one of equals, not_equals, contains, greater_than, less_than")
		}
		c.Value, c.Kind = conditionValue(vs, at+".value", cs)
		if c.FieldID != "" && c.Kind == "string" && len(fields[k].Options) > 0 && c.Operator != "greater_than" && c.Operator != "less_than" && !fields[k].HasOption(c.Value) {
			vs.Add(at+".value", "invalid_value", fmt.Sprintf("%q is not an option of %q", c.Value, fields[k].Label))
		}
		rule.Conditions = append(rule.Conditions, c)
	}
	return rule
}

func conditionValue(vs *domain.Violations, path string, cs ConditionSpec) (string, string) {
	if !cs.HasValue {
		vs.Add(path, "required", "value is required")
		return "", ""
	}
	switch v := cs.Value.(type) {
	case string:
		if text.Field(vs, path, v) && utf8.RuneCountInString(v) > maxConditionValue {
			vs.Add(path, "too_long", fmt.Sprintf("value must be at most %d characters", maxConditionValue))
		}
		return v, "string"
	case bool:
		return strconv.FormatBool(v), "boolean"
	case int:
		return strconv.Itoa(v), "number"
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), "number"
	case json.Number:
		return numberValue(vs, path, string(v))
	case fmt.Stringer:
		return numberValue(vs, path, v.String())
	}
	vs.Add(path, "invalid_type", "value must be a string, a number or a boolean")
	return "", ""
}

func numberValue(vs *domain.Violations, path, s string) (string, string) {
	n, ok := parseNumber(s)
	if !ok {
		vs.Add(path, "invalid_type", "value must be a finite number")
		return "", "number"
	}
	return strconv.FormatFloat(n, 'f', -1, 64), "number"
}

// HasLogic reports whether any field has a display rule.
func HasLogic(fields []Field) bool {
	for _, f := range fields {
		if f.ShowIf != nil {
			return true
		}
	}
	return false
}

// Skipped evaluates the display rules in field order and returns the IDs of the fields whose
// rule does not hold (nil when no field has one). A skipped field's answer counts as missing
// for the rules of later fields, so chains of rules follow. The public page and the server
// both decide with this one function.
func Skipped(fields []Field, answer func(fieldID string) (Answer, bool)) map[string]bool {
	var off map[string]bool
	for _, f := range fields {
		if f.ShowIf == nil {
			continue
		}
		if !f.ShowIf.holds(func(id string) (Answer, bool) {
			if off[id] {
				return Answer{}, false
			}
			return answer(id)
		}) {
			if off == nil {
				off = map[string]bool{}
			}
			off[f.ID] = true
		}
	}
	return off
}

func (s ShowIf) holds(answer func(string) (Answer, bool)) bool {
	for _, c := range s.Conditions {
		a, ok := answer(c.FieldID)
		h := c.Holds(a, ok)
		if s.Any && h {
			return true
		}
		if !s.Any && !h {
			return false
		}
	}
	return !s.Any
}

// Holds reports whether the condition is true of an answer; present is false when the field
// has none. Like a workflow condition: equals and not_equals compare as numbers when both
// sides are numbers (a list equals only [value]); contains is a substring or list member;
// greater_than and less_than compare numbers or dates; a missing answer matches only
// not_equals.
func (c Condition) Holds(a Answer, present bool) bool {
	if present && (a.List && len(a.Items) == 0 || !a.List && (len(a.Items) == 0 || a.Items[0] == "")) {
		present = false
	}
	if !present {
		return c.Operator == "not_equals"
	}
	switch c.Operator {
	case "equals":
		return c.equals(a)
	case "not_equals":
		return !c.equals(a)
	case "contains":
		if a.List {
			for _, it := range a.Items {
				if it == c.Value {
					return true
				}
			}
			return false
		}
		return strings.Contains(a.Items[0], c.Value)
	case "greater_than", "less_than":
		if a.List {
			return false
		}
		cmp, ok := compare(a.Items[0], c.Value)
		if !ok {
			return false
		}
		if c.Operator == "greater_than" {
			return cmp > 0
		}
		return cmp < 0
	}
	return false
}

func (c Condition) equals(a Answer) bool {
	if a.List && len(a.Items) != 1 {
		return false
	}
	return scalarEquals(a.Items[0], c.Value)
}

func scalarEquals(a, b string) bool {
	x, okx := parseNumber(a)
	y, oky := parseNumber(b)
	if okx && oky {
		return x == y
	}
	return a == b
}

func parseNumber(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

func compare(a, b string) (int, bool) {
	if x, ok := parseNumber(a); ok {
		y, ok := parseNumber(b)
		if !ok {
			return 0, false
		}
		switch {
		case x < y:
			return -1, true
		case x > y:
			return 1, true
		}
		return 0, true
	}
	x, errx := time.Parse("2006-01-02", a)
	y, erry := time.Parse("2006-01-02", b)
	if errx != nil || erry != nil || len(a) != 10 || len(b) != 10 {
		return 0, false
	}
	return x.Compare(y), true
}

// Steps are the page numbers a respondent goes through, in order: the pages holding at least
// one field that is neither hidden (filled from the URL) nor skipped by its display rule.
// A form whose fields are all hidden has one step, the first page.
func Steps(fields []Field, skipped map[string]bool) []int {
	seen := map[int]bool{}
	var out []int
	for _, f := range fields {
		if f.Hidden || skipped[f.ID] || seen[f.Page] {
			continue
		}
		seen[f.Page] = true
		out = append(out, f.Page)
	}
	sort.Ints(out)
	if len(out) == 0 {
		out = []int{1}
	}
	return out
}

// Paged reports whether the form has more than one page.
func Paged(fields []Field) bool {
	for _, f := range fields {
		if f.Page > 1 {
			return true
		}
	}
	return false
}
