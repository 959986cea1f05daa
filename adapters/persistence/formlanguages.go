package persistence

import (
	"fmt"
	"strings"

	"github.com/formward/formward/adapters/jsoncodec"
	"github.com/formward/formward/domain/form"
)

// formTranslationJSON is the stored shape of the form's own text in one language.
type formTranslationJSON struct {
	Name            string `json:"name,omitempty"`
	Description     string `json:"description,omitempty"`
	ThankYouMessage string `json:"thank_you_message,omitempty"`
	ClosedMessage   string `json:"closed_message,omitempty"`
}

// fieldTranslationJSON is the stored shape of a field's text in one language.
type fieldTranslationJSON struct {
	Label       string   `json:"label,omitempty"`
	Placeholder string   `json:"placeholder,omitempty"`
	Help        string   `json:"help,omitempty"`
	Options     []string `json:"options,omitempty"`
}

func formTranslationsToJSON(in map[string]form.FormTranslation) map[string]formTranslationJSON {
	if len(in) == 0 {
		return nil
	}
	out := make(map[string]formTranslationJSON, len(in))
	for k, t := range in {
		out[k] = formTranslationJSON(t)
	}
	return out
}

func fieldTranslationsToJSON(in map[string]form.FieldTranslation) map[string]fieldTranslationJSON {
	if len(in) == 0 {
		return nil
	}
	out := make(map[string]fieldTranslationJSON, len(in))
	for k, t := range in {
		out[k] = fieldTranslationJSON(t)
	}
	return out
}

func fieldTranslationsFromJSON(in map[string]fieldTranslationJSON) map[string]form.FieldTranslation {
	if len(in) == 0 {
		return nil
	}
	out := make(map[string]form.FieldTranslation, len(in))
	for k, t := range in {
		out[k] = form.FieldTranslation(t)
	}
	return out
}

// storedLanguages is the part of the settings text that holds the form's languages.
type storedLanguages struct {
	Languages    []string                       `json:"languages"`
	Translations map[string]formTranslationJSON `json:"translations"`
}

// withStoredLanguages gives f the languages stored in its settings text. The settings of a
// single-language form hold no "languages" key, and are not read a second time.
func withStoredLanguages(f *form.Form, settings string) (*form.Form, error) {
	if !strings.Contains(settings, `"languages"`) {
		return f, nil
	}
	var in storedLanguages
	if err := jsoncodec.Unmarshal([]byte(settings), &in); err != nil {
		return nil, fmt.Errorf("decode languages of form %s: %w", f.ID(), err)
	}
	var tr map[string]form.FormTranslation
	if len(in.Translations) > 0 {
		tr = make(map[string]form.FormTranslation, len(in.Translations))
		for k, t := range in.Translations {
			tr[k] = form.FormTranslation(t)
		}
	}
	return f.WithLanguagesFromDatabase(in.Languages, tr), nil
}
