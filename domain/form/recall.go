package form

import (
	"fmt"
	"strings"

	"github.com/formward/formward/domain"
)

// RecallPart is a piece of a text that recalls answers: plain Text, or (Name not empty) a
// {{name}} spot that shows the answer of the field with that key or ID.
type RecallPart struct {
	Text string
	Name string
}

// SplitRecall cuts s at its {{name}} spots (spaces inside the braces allowed); nil when s has
// none, so texts without recall cost nothing. A "{{" without its "}}", or with an empty name,
// stays text.
func SplitRecall(s string) []RecallPart {
	if !strings.Contains(s, "{{") {
		return nil
	}
	var out []RecallPart
	rest := s
	found := false
	for {
		start := strings.Index(rest, "{{")
		if start < 0 {
			break
		}
		end := strings.Index(rest[start+2:], "}}")
		if end < 0 {
			break
		}
		name := strings.TrimSpace(rest[start+2 : start+2+end])
		if name == "" || strings.ContainsAny(name, "{} \t\n") {
			out = append(out, RecallPart{Text: rest[:start+2]})
			rest = rest[start+2:]
			continue
		}
		if start > 0 {
			out = append(out, RecallPart{Text: rest[:start]})
		}
		out = append(out, RecallPart{Name: name})
		found = true
		rest = rest[start+2+end+2:]
	}
	if !found {
		return nil
	}
	if rest != "" {
		out = append(out, RecallPart{Text: rest})
	}
	return out
}

// RecallSource finds the field a recall spot names, by key or ID; ok is false when none does.
func RecallSource(fields []Field, name string) (Field, bool) {
	for _, f := range fields {
		if f.Key == name || f.ID == name {
			return f, true
		}
	}
	return Field{}, false
}

// checkRecall: every {{name}} in a field's label or help names a question asked before it
// (on an earlier page, or earlier on the same page), which is not a file question.
func checkRecall(vs *domain.Violations, out []Field) {
	index := make(map[string]int, 2*len(out))
	for k, f := range out {
		index[f.ID] = k
		if f.Key != "" {
			index[f.Key] = k
		}
	}
	check := func(i int, prop, text string) {
		for _, p := range SplitRecall(text) {
			if p.Name == "" {
				continue
			}
			k, ok := index[p.Name]
			earlier := ok && (out[k].Page < out[i].Page || (out[k].Page == out[i].Page && k < i))
			switch {
			case !earlier:
				vs.Add(fmt.Sprintf("fields[%d].%s", i, prop), "unknown_recall",
					fmt.Sprintf("{{%s}} names no question asked before this one: recall an earlier question by its key", p.Name))
			case out[k].Type == TypeFile:
				vs.Add(fmt.Sprintf("fields[%d].%s", i, prop), "unknown_recall",
					fmt.Sprintf("{{%s}} is a file question, whose answer cannot be recalled", p.Name))
			}
		}
	}
	for i, f := range out {
		check(i, "label", f.Label)
		if f.Help != nil {
			check(i, "help", *f.Help)
		}
	}
}

// checkThankYouRecall: every {{name}} in the thank-you message names a field of the form (by
// key or ID, not a file field) or is {{score}}.
func checkThankYouRecall(vs *domain.Violations, msg *string, fields []Field) {
	if msg == nil {
		return
	}
	for _, p := range SplitRecall(*msg) {
		if p.Name == "" || p.Name == "score" {
			continue
		}
		if src, ok := RecallSource(fields, p.Name); !ok || src.Type == TypeFile {
			vs.Add("settings.thank_you_message", "unknown_recall",
				fmt.Sprintf("{{%s}} names no question of this form: recall a question by its key, or show the score with {{score}}", p.Name))
		}
	}
}

// ThankYouRecalls reports whether the form's thank-you message, or one of its translations,
// names an answer or the score ({{…}}).
func (f *Form) ThankYouRecalls() bool {
	if m := f.settings.ThankYouMessage; m != nil && strings.Contains(*m, "{{") {
		return true
	}
	for _, t := range f.translations {
		if strings.Contains(t.ThankYouMessage, "{{") {
			return true
		}
	}
	return false
}
