package form

import "time"

// RemovedField is a field taken off the form. Its stored answers stay in the submissions
// (the spec keeps them unchanged), so the form remembers what the field was called: the
// responses pages and the exports that ask for them show those answers as "removed" columns.
type RemovedField struct {
	ID        string
	Key       string
	Label     string
	Type      FieldType
	RemovedAt time.Time
}

// AsField is the removed field as a field of its type and label, for code that reads an
// answer the way a current field's answer is read (a file field's uploads are links).
func (r RemovedField) AsField() Field {
	return Field{ID: r.ID, Key: r.Key, Label: r.Label, Type: r.Type, Page: 1}
}

// removedBy lists the fields of before that after no longer has, in their order on the form,
// each stamped with the time it was removed.
func removedBy(before, after []Field, now time.Time) []RemovedField {
	kept := make(map[string]bool, len(after))
	for _, f := range after {
		kept[f.ID] = true
	}
	var out []RemovedField
	for _, f := range before {
		if !kept[f.ID] {
			out = append(out, RemovedField{ID: f.ID, Key: f.Key, Label: f.Label, Type: f.Type, RemovedAt: now})
		}
	}
	return out
}

// RemovedFields returns a copy of the fields removed from the form, oldest removal first.
func (f *Form) RemovedFields() []RemovedField {
	return append([]RemovedField(nil), f.removed...)
}

// RemovedField returns the removed field with the given ID.
func (f *Form) RemovedField(id string) (RemovedField, bool) {
	for _, r := range f.removed {
		if r.ID == id {
			return r, true
		}
	}
	return RemovedField{}, false
}

// WithRemovedFieldsFromDatabase gives a stored form the removed fields stored with it, without
// re-checking them (the repository's rebuild, after UnmarshalWithSettingsFromDatabase).
func (f *Form) WithRemovedFieldsFromDatabase(removed []RemovedField) *Form {
	f.removed = make([]RemovedField, len(removed))
	for i, r := range removed {
		r.RemovedAt = r.RemovedAt.UTC()
		f.removed[i] = r
	}
	return f
}
