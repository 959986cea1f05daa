package httpapi

import (
	"maps"
	"slices"

	"github.com/formward/formward/domain/form"
)

// languageProps are the form properties of languages (issue 26): the form's language tags and
// its own translations. Fields take "translations" too (fieldProps).
var languageProps = []string{"languages", "translations"}

// formTranslationView is the form's own text in one language; an absent property is a
// missing translation.
type formTranslationView struct {
	Name            string `json:"name,omitempty"`
	Description     string `json:"description,omitempty"`
	ThankYouMessage string `json:"thank_you_message,omitempty"`
	ClosedMessage   string `json:"closed_message,omitempty"`
}

// fieldTranslationView is a field's text in one language.
type fieldTranslationView struct {
	Label       string   `json:"label,omitempty"`
	Placeholder string   `json:"placeholder,omitempty"`
	Help        string   `json:"help,omitempty"`
	Options     []string `json:"options,omitempty"`
}

// readLanguages reads the form's languages and translations; nil when absent (null clears).
func readLanguages(o object) (languages *[]string, translations *map[string]form.FormTranslation) {
	if o.has("languages") {
		var tags []string
		if !o.isNull("languages") {
			tags, _ = o.strings("languages")
		}
		languages = &tags
	}
	if o.has("translations") {
		tr := map[string]form.FormTranslation{}
		if t, ok := o.child("translations"); ok {
			for _, lang := range slices.Sorted(maps.Keys(t.props)) {
				one, ok := t.child(lang)
				if !ok {
					continue
				}
				one.allow([]string{"name", "description", "thank_you_message", "closed_message"}, nil)
				var ft form.FormTranslation
				ft.Name, _ = one.str("name")
				ft.Description, _ = one.str("description")
				ft.ThankYouMessage, _ = one.str("thank_you_message")
				ft.ClosedMessage, _ = one.str("closed_message")
				tr[lang] = ft
			}
		}
		translations = &tr
	}
	return languages, translations
}

// readFieldTranslations reads a field's translations; nil when absent or null.
func readFieldTranslations(it object) map[string]form.FieldTranslation {
	t, ok := it.child("translations")
	if !ok {
		return nil
	}
	out := make(map[string]form.FieldTranslation, len(t.props))
	for _, lang := range slices.Sorted(maps.Keys(t.props)) {
		one, ok := t.child(lang)
		if !ok {
			continue
		}
		one.allow([]string{"label", "placeholder", "help", "options"}, nil)
		var ft form.FieldTranslation
		ft.Label, _ = one.str("label")
		ft.Placeholder, _ = one.str("placeholder")
		ft.Help, _ = one.str("help")
		if !one.isNull("options") {
			ft.Options, _ = one.strings("options")
		}
		out[lang] = ft
	}
	return out
}

func presentLanguages(f *form.Form) ([]string, map[string]formTranslationView) {
	langs := f.Languages()
	if langs == nil {
		langs = []string{}
	}
	out := map[string]formTranslationView{}
	for k, t := range f.Translations() {
		out[k] = formTranslationView(t)
	}
	return langs, out
}

func presentFieldTranslations(in map[string]form.FieldTranslation) map[string]fieldTranslationView {
	out := make(map[string]fieldTranslationView, len(in))
	for k, t := range in {
		out[k] = fieldTranslationView(t)
	}
	return out
}

// deref is the value p points at, or the zero value for nil.
func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
