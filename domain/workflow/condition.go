package workflow

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/domain/text"
)

// Operator compares a submitted value with a condition's value.
type Operator string

// The five condition operators.
const (
	Equals      Operator = "equals"
	NotEquals   Operator = "not_equals"
	Contains    Operator = "contains"
	GreaterThan Operator = "greater_than"
	LessThan    Operator = "less_than"
)

// ParseOperator accepts one of the five operator names.
func ParseOperator(s string) (Operator, bool) {
	switch o := Operator(s); o {
	case Equals, NotEquals, Contains, GreaterThan, LessThan:
		return o, true
	}
	return "", false
}

// ValueKind is the JSON type a condition's value was given as, so it is shown back the same way.
type ValueKind string

// The three kinds a condition value may have.
const (
	KindString  ValueKind = "string"
	KindNumber  ValueKind = "number"
	KindBoolean ValueKind = "boolean"
)

// Condition is one test on a submitted value; Value is stored in canonical string form.
type Condition struct {
	FieldID  string
	Operator Operator
	Value    string
	Kind     ValueKind
}

// ConditionSpec is a condition as a client sent it. Value may be a string, a bool, a number
// (float64, int, json.Number or submission.Number); anything else is refused.
type ConditionSpec struct {
	FieldID  string
	Operator string
	Value    any
	HasValue bool
}

// maxConditionValue bounds a condition's string value; no submitted value is longer than a
// textarea's 10,000 characters, so a longer one could never match.
const maxConditionValue = 10000

func parseCondition(path string, s ConditionSpec) (Condition, []domain.Violation) {
	var vs domain.Violations
	c := Condition{FieldID: strings.TrimSpace(s.FieldID)}
	if c.FieldID == "" {
		vs.Add(path+".field_id", "required", "field_id is required")
	} else {
		text.Field(&vs, path+".field_id", c.FieldID)
	}
	if op, ok := ParseOperator(s.Operator); ok {
		c.Operator = op
	} else if s.Operator == "" {
		vs.Add(path+".operator", "required", "operator is required")
	} else {
		vs.Add(path+".operator", "invalid_value", "operator must be one of equals, not_equals, contains, greater_than, less_than")
	}
	if !s.HasValue {
		vs.Add(path+".value", "required", "value is required")
		return c, vs
	}
	switch v := s.Value.(type) {
	case string:
		c.Value, c.Kind = v, KindString
		if text.Field(&vs, path+".value", v) && utf8.RuneCountInString(v) > maxConditionValue {
			vs.Add(path+".value", "too_long", fmt.Sprintf("value must be at most %d characters", maxConditionValue))
		}
	case bool:
		c.Value, c.Kind = strconv.FormatBool(v), KindBoolean
	case int:
		c.Value, c.Kind = strconv.Itoa(v), KindNumber
	case float64:
		c.Value, c.Kind = canonicalNumber(v), KindNumber
	case json.Number:
		c.Value, c.Kind = numberText(&vs, path, string(v))
	case submission.Number:
		c.Value, c.Kind = numberText(&vs, path, string(v))
	default:
		vs.Add(path+".value", "invalid_type", "value must be a string, a number or a boolean")
	}
	return c, vs
}

func numberText(vs *domain.Violations, path, s string) (string, ValueKind) {
	f, ok := parseNumber(s)
	if !ok {
		vs.Add(path+".value", "invalid_type", "value must be a finite number")
		return "", KindNumber
	}
	return canonicalNumber(f), KindNumber
}

func canonicalNumber(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

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

func parseDate(s string) (time.Time, bool) {
	if len(s) != len("2006-01-02") {
		return time.Time{}, false
	}
	t, err := time.Parse("2006-01-02", s)
	return t, err == nil
}

// Holds reports whether the condition is true of a submitted value; present is false when the
// field has no value (a missing, empty or empty-list value), which matches only not_equals.
func (c Condition) Holds(v submission.Value, present bool) bool {
	if present && !v.IsList() && v.String() == "" {
		present = false
	}
	if present && v.IsList() && len(v.Strings()) == 0 {
		present = false
	}
	if !present {
		return c.Operator == NotEquals
	}
	switch c.Operator {
	case Equals:
		return c.equals(v)
	case NotEquals:
		return !c.equals(v)
	case Contains:
		if v.IsList() {
			for _, item := range v.Strings() {
				if item == c.Value {
					return true
				}
			}
			return false
		}
		return strings.Contains(v.String(), c.Value)
	case GreaterThan, LessThan:
		if v.IsList() {
			return false
		}
		cmp, ok := compare(v.String(), c.Value)
		if !ok {
			return false
		}
		if c.Operator == GreaterThan {
			return cmp > 0
		}
		return cmp < 0
	}
	return false
}

func (c Condition) equals(v submission.Value) bool {
	if v.IsList() {
		items := v.Strings()
		return len(items) == 1 && scalarEquals(items[0], c.Value)
	}
	return scalarEquals(v.String(), c.Value)
}

func scalarEquals(a, b string) bool {
	x, okx := parseNumber(a)
	y, oky := parseNumber(b)
	if okx && oky {
		return x == y
	}
	return a == b
}

// compare orders two values as numbers when both are numbers, as dates when both are dates.
func compare(a, b string) (int, bool) {
	if x, ok := parseNumber(a); ok {
		if y, ok := parseNumber(b); ok {
			switch {
			case x < y:
				return -1, true
			case x > y:
				return 1, true
			}
			return 0, true
		}
		return 0, false
	}
	if x, ok := parseDate(a); ok {
		if y, ok := parseDate(b); ok {
			return x.Compare(y), true
		}
	}
	return 0, false
}
