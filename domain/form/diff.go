package form

import (
	"reflect"
	"slices"
)

// The aspects of a field a change can touch, as a history names them.
const (
	AspectLabel       = "label"
	AspectKey         = "key"
	AspectType        = "type"
	AspectRequired    = "required"
	AspectOptions     = "options"
	AspectLogic       = "logic"
	AspectHelp        = "help"
	AspectPlaceholder = "placeholder"
	AspectPage        = "page"
	AspectHidden      = "hidden"
	AspectFiles       = "files"
	// AspectTranslations is the field's text in the form's other languages (languages.go).
	AspectTranslations = "translations"
	AspectScores       = "scores"
	// AspectOther is any other property of the field.
	AspectOther = "other"
)

// FieldChange is what happened to one field between two lists of fields. Before is nil for an
// added field, After for a removed one.
type FieldChange struct {
	Before, After *Field
	// Aspects name what differs on a field both lists hold, in a fixed order.
	Aspects []string
	// OptionsAdded and OptionsRemoved are the options only the later, or only the earlier,
	// field offers.
	OptionsAdded, OptionsRemoved []string
}

// Added reports whether the field is only in the later list.
func (c FieldChange) Added() bool { return c.Before == nil }

// Removed reports whether the field is only in the earlier list.
func (c FieldChange) Removed() bool { return c.After == nil }

// Relabelled reports whether the field's label is the only thing that changed.
func (c FieldChange) Relabelled() bool {
	return len(c.Aspects) == 1 && c.Aspects[0] == AspectLabel
}

// Field is the field as the later list has it, or the earlier one for a removed field.
func (c FieldChange) Field() Field {
	if c.After != nil {
		return *c.After
	}
	return *c.Before
}

// Has reports whether the change touches the aspect.
func (c FieldChange) Has(aspect string) bool { return slices.Contains(c.Aspects, aspect) }

// FieldsDiff compares two lists of a form's fields: Changes holds every field added, removed
// or changed, in the later list's order with removed fields last; Reordered says whether the
// fields both lists hold come in another order.
type FieldsDiff struct {
	Changes   []FieldChange
	Reordered bool
	// Unchanged counts the fields both lists hold alike.
	Unchanged int
}

// Empty reports whether the lists hold the same fields in the same order.
func (d FieldsDiff) Empty() bool { return len(d.Changes) == 0 && !d.Reordered }

// Count returns how many fields were added, removed, relabelled only, and otherwise changed.
func (d FieldsDiff) Count() (added, removed, relabelled, changed int) {
	for _, c := range d.Changes {
		switch {
		case c.Added():
			added++
		case c.Removed():
			removed++
		case c.Relabelled():
			relabelled++
		default:
			changed++
		}
	}
	return added, removed, relabelled, changed
}

// DiffFields compares the fields of two versions of a form, matching fields by ID: the ID
// outlives relabelling and re-keying, which is what keeps a field's stored answers.
func DiffFields(before, after []Field) FieldsDiff {
	var d FieldsDiff
	old := make(map[string]int, len(before))
	for i, f := range before {
		old[f.ID] = i
	}
	var kept, keptBefore []string
	seen := make(map[string]bool, len(after))
	for i := range after {
		a := &after[i]
		seen[a.ID] = true
		j, ok := old[a.ID]
		if !ok {
			d.Changes = append(d.Changes, FieldChange{After: a})
			continue
		}
		kept = append(kept, a.ID)
		b := &before[j]
		c := compareField(*b, *a)
		if len(c.Aspects) == 0 {
			d.Unchanged++
			continue
		}
		c.Before, c.After = b, a
		d.Changes = append(d.Changes, c)
	}
	for i := range before {
		if !seen[before[i].ID] {
			d.Changes = append(d.Changes, FieldChange{Before: &before[i]})
		} else {
			keptBefore = append(keptBefore, before[i].ID)
		}
	}
	d.Reordered = !slices.Equal(kept, keptBefore)
	return d
}

// compareField names the aspects in which two versions of one field differ.
func compareField(b, a Field) FieldChange {
	var c FieldChange
	add := func(differs bool, aspect string) {
		if differs {
			c.Aspects = append(c.Aspects, aspect)
		}
	}
	add(b.Label != a.Label, AspectLabel)
	add(b.Key != a.Key, AspectKey)
	add(b.Type != a.Type, AspectType)
	add(b.Required != a.Required, AspectRequired)
	if !slices.Equal(b.Options, a.Options) {
		c.Aspects = append(c.Aspects, AspectOptions)
		c.OptionsAdded = without(a.Options, b.Options)
		c.OptionsRemoved = without(b.Options, a.Options)
	}
	add(!reflect.DeepEqual(b.ShowIf, a.ShowIf), AspectLogic)
	add(!sameText(b.Help, a.Help), AspectHelp)
	add(!sameText(b.Placeholder, a.Placeholder), AspectPlaceholder)
	add(b.Page != a.Page, AspectPage)
	add(b.Hidden != a.Hidden, AspectHidden)
	add(!slices.Equal(b.Accept, a.Accept) || b.MaxFileBytes != a.MaxFileBytes, AspectFiles)
	add(!sameTranslations(b.Translations, a.Translations), AspectTranslations)
	add(!slices.Equal(b.Scores, a.Scores), AspectScores)
	// Whatever else a field holds (properties added after this list was written) counts as
	// "other": copy the compared aspects across and look at the rest.
	rest := b
	rest.Label, rest.Key, rest.Type, rest.Required, rest.Options = a.Label, a.Key, a.Type, a.Required, a.Options
	rest.ShowIf, rest.Help, rest.Placeholder, rest.Page, rest.Hidden = a.ShowIf, a.Help, a.Placeholder, a.Page, a.Hidden
	rest.Accept, rest.MaxFileBytes = a.Accept, a.MaxFileBytes
	rest.Translations = a.Translations
	rest.Scores = a.Scores
	add(!reflect.DeepEqual(rest, a), AspectOther)
	return c
}

func sameText(a, b *string) bool {
	switch {
	case a == nil || b == nil:
		return a == b || (a == nil && *b == "") || (b == nil && *a == "")
	default:
		return *a == *b
	}
}

// without returns the items of xs that ys lacks, in xs's order.
func without(xs, ys []string) []string {
	var out []string
	for _, x := range xs {
		if !slices.Contains(ys, x) {
			out = append(out, x)
		}
	}
	return out
}
