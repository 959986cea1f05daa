package form

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/text"
)

// MaxLanguages bounds a form's languages.
const MaxLanguages = 20

// FormTranslation is the form's own text in one language; an empty string is a missing
// translation (the page shows the default language's text instead).
type FormTranslation struct {
	Name            string
	Description     string
	ThankYouMessage string
	// ClosedMessage translates settings.closing.message.
	ClosedMessage string
}

// Empty reports whether the translation holds no text.
func (t FormTranslation) Empty() bool { return t == FormTranslation{} }

// FieldTranslation is a field's text in one language; empty strings (and a nil Options) are
// missing translations. Options, when set, translate the field's options one for one: the
// stored answer is always the default language's option.
type FieldTranslation struct {
	Label       string
	Placeholder string
	Help        string
	Options     []string
}

// Empty reports whether the translation holds no text.
func (t FieldTranslation) Empty() bool {
	return t.Label == "" && t.Placeholder == "" && t.Help == "" && len(t.Options) == 0
}

// Languages returns the form's BCP 47 language tags in canonical form, the default first; nil
// for a single-language form.
func (f *Form) Languages() []string { return slices.Clone(f.languages) }

// DefaultLanguage returns the form's first language, or "" for a single-language form.
func (f *Form) DefaultLanguage() string {
	if len(f.languages) == 0 {
		return ""
	}
	return f.languages[0]
}

// Translations returns a copy of the form's own translations by language tag.
func (f *Form) Translations() map[string]FormTranslation { return maps.Clone(f.translations) }

// WithLanguagesFromDatabase gives a stored form its stored languages and translations,
// without checking them again.
func (f *Form) WithLanguagesFromDatabase(languages []string, translations map[string]FormTranslation) *Form {
	f.languages, f.translations = languages, translations
	return f
}

// CanonicalLanguage checks that tag is a well-formed BCP 47 language tag (RFC 5646: a 2–3 or
// 5–8 letter language, an optional 4-letter script, an optional 2-letter or 3-digit region,
// variants and extensions; "_" read as "-") and returns it in canonical case: "EN_us" is
// "en-US", "zh-hant-tw" is "zh-Hant-TW". The domain uses no outside module: the adapters
// match tags against a respondent's languages with golang.org/x/text/language.
func CanonicalLanguage(tag string) (string, bool) {
	if tag == "" || len(tag) > 64 {
		return "", false
	}
	parts := strings.Split(strings.ReplaceAll(tag, "_", "-"), "-")
	for _, p := range parts {
		if p == "" || len(p) > 8 {
			return "", false
		}
		for _, r := range p {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
				return "", false
			}
		}
	}
	alpha := func(s string) bool { return strings.Trim(strings.ToLower(s), "abcdefghijklmnopqrstuvwxyz") == "" }
	digit := func(s string) bool { return strings.Trim(s, "0123456789") == "" }
	lang := strings.ToLower(parts[0])
	if !alpha(lang) || len(lang) < 2 || len(lang) == 4 || lang == "und" {
		return "", false
	}
	out := []string{lang}
	i := 1
	// Up to three extended language subtags (3 letters) after a 2–3 letter language.
	for n := 0; n < 3 && i < len(parts) && len(lang) <= 3 && len(parts[i]) == 3 && alpha(parts[i]); n++ {
		out = append(out, strings.ToLower(parts[i]))
		i++
	}
	if i < len(parts) && len(parts[i]) == 4 && alpha(parts[i]) {
		p := strings.ToLower(parts[i])
		out = append(out, strings.ToUpper(p[:1])+p[1:])
		i++
	}
	if i < len(parts) && (len(parts[i]) == 2 && alpha(parts[i]) || len(parts[i]) == 3 && digit(parts[i])) {
		out = append(out, strings.ToUpper(parts[i]))
		i++
	}
	for ; i < len(parts); i++ {
		p := strings.ToLower(parts[i])
		switch {
		case len(p) >= 5 || len(p) == 4 && p[0] >= '0' && p[0] <= '9': // a variant
		case len(p) == 1: // an extension or private use: the rest, each 1–8 characters
			for _, rest := range parts[i:] {
				out = append(out, strings.ToLower(rest))
			}
			if len(parts[len(parts)-1]) == 1 {
				return "", false
			}
			return strings.Join(out, "-"), true
		default:
			return "", false
		}
		out = append(out, p)
	}
	return strings.Join(out, "-"), true
}

// checkLanguages reads a list of tags into canonical form: valid tags, no duplicates, at most
// MaxLanguages. An empty list is nil: the form has one language and no translations.
func checkLanguages(vs *domain.Violations, tags []string) []string {
	if len(tags) == 0 {
		return nil
	}
	if len(tags) > MaxLanguages {
		vs.Add("languages", "too_many", fmt.Sprintf("a form lists at most %d languages", MaxLanguages))
		return nil
	}
	out := make([]string, 0, len(tags))
	for i, raw := range tags {
		path := fmt.Sprintf("languages[%d]", i)
		c, ok := CanonicalLanguage(raw)
		switch {
		case !ok:
			vs.Add(path, "invalid_language", fmt.Sprintf("%q is not a BCP 47 language tag such as en, de or pt-BR", raw))
		case slices.Contains(out, c):
			vs.Add(path, "duplicate", "language "+c+" appears twice")
		default:
			out = append(out, c)
		}
	}
	return out
}

// translationKey canonicalises a translation's language key against the form's languages,
// adding a violation at path when it is not one of them or is the default.
func translationKey(vs *domain.Violations, path, raw string, languages []string) (string, bool) {
	c, ok := CanonicalLanguage(raw)
	switch {
	case !ok:
		vs.Add(path, "invalid_language", fmt.Sprintf("%q is not a BCP 47 language tag", raw))
		return "", false
	case len(languages) > 0 && c == languages[0]:
		vs.Add(path, "default_language", c+" is the form's default language: its text is the field's own (label, help, options), not a translation")
		return "", false
	case !slices.Contains(languages, c):
		if len(languages) == 0 {
			vs.Add(path, "unknown_language", "the form lists no languages: add "+c+" to languages (after the default) before translating into it")
		} else {
			vs.Add(path, "unknown_language", "the form's languages are "+strings.Join(languages, ", ")+": add "+c+" to languages before translating into it")
		}
		return "", false
	}
	return c, true
}

// checkTranslationText checks one translated string against the cap of the original.
func checkTranslationText(vs *domain.Violations, path, s string, limit int) {
	if s == "" || !text.Field(vs, path, s) {
		return
	}
	if utf8.RuneCountInString(s) > limit {
		vs.Add(path, "too_long", fmt.Sprintf("must be at most %d characters, like the original", limit))
	}
}

// checkFormTranslations checks the form's own translations; the result has canonical keys
// and no empty entries (nil when none is left).
func checkFormTranslations(vs *domain.Violations, in map[string]FormTranslation, languages []string) map[string]FormTranslation {
	if len(in) == 0 {
		return nil
	}
	out := make(map[string]FormTranslation, len(in))
	for _, raw := range slices.Sorted(maps.Keys(in)) {
		t := in[raw]
		path := "translations." + raw
		tag, ok := translationKey(vs, path, raw, languages)
		if !ok {
			continue
		}
		if _, dup := out[tag]; dup {
			vs.Add(path, "duplicate", "language "+tag+" is translated twice")
			continue
		}
		t.Name = strings.TrimSpace(t.Name)
		checkTranslationText(vs, path+".name", t.Name, maxName)
		checkTranslationText(vs, path+".description", t.Description, maxDescription)
		checkTranslationText(vs, path+".thank_you_message", t.ThankYouMessage, maxThankYou)
		checkTranslationText(vs, path+".closed_message", t.ClosedMessage, maxClosingMessage)
		if !t.Empty() {
			out[tag] = t
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// checkFieldTranslations checks every field's translations against the form's languages and
// the field's own options; it returns the fields with canonical keys and no empty entries.
func checkFieldTranslations(vs *domain.Violations, fields []Field, languages []string) []Field {
	for i := range fields {
		fl := &fields[i]
		if len(fl.Translations) == 0 {
			fl.Translations = nil
			continue
		}
		out := make(map[string]FieldTranslation, len(fl.Translations))
		for _, raw := range slices.Sorted(maps.Keys(fl.Translations)) {
			t := fl.Translations[raw]
			path := fmt.Sprintf("fields[%d].translations.%s", i, raw)
			tag, ok := translationKey(vs, path, raw, languages)
			if !ok {
				continue
			}
			if _, dup := out[tag]; dup {
				vs.Add(path, "duplicate", "language "+tag+" is translated twice")
				continue
			}
			t.Label = strings.TrimSpace(t.Label)
			checkTranslationText(vs, path+".label", t.Label, maxLabel)
			checkTranslationText(vs, path+".placeholder", t.Placeholder, maxPlaceholder)
			checkTranslationText(vs, path+".help", t.Help, maxHelp)
			if len(t.Options) > 0 {
				if len(t.Options) != len(fl.Options) {
					vs.Add(path+".options", "count_mismatch", fmt.Sprintf("the field has %d options: translate each of them, in the same order (%d given)", len(fl.Options), len(t.Options)))
				} else {
					for j, o := range t.Options {
						item := fmt.Sprintf("%s.options[%d]", path, j)
						if strings.TrimSpace(o) == "" {
							vs.Add(item, "required", "a translated option must not be empty")
							continue
						}
						checkTranslationText(vs, item, o, maxOption)
					}
				}
				t.Options = slices.Clone(t.Options)
			} else {
				t.Options = nil
			}
			if !t.Empty() {
				out[tag] = t
			}
		}
		if len(out) == 0 {
			out = nil
		}
		fl.Translations = out
	}
	return fields
}

// dropTranslations removes the translations into languages the form no longer lists (a
// change of languages alone); it reports whether any field changed.
func dropTranslations(fields []Field, languages []string) ([]Field, bool) {
	changed := false
	for i := range fields {
		for tag := range fields[i].Translations {
			if !slices.Contains(languages[min(1, len(languages)):], tag) {
				if !changed {
					fields = slices.Clone(fields)
					changed = true
				}
				kept := maps.Clone(fields[i].Translations)
				delete(kept, tag)
				if len(kept) == 0 {
					kept = nil
				}
				fields[i].Translations = kept
			}
		}
	}
	return fields, changed
}

// keptFormTranslations are the form's translations into languages still listed, other than
// the default.
func keptFormTranslations(in map[string]FormTranslation, languages []string) map[string]FormTranslation {
	var out map[string]FormTranslation
	for tag, t := range in {
		if slices.Contains(languages[min(1, len(languages)):], tag) {
			if out == nil {
				out = make(map[string]FormTranslation, len(in))
			}
			out[tag] = t
		}
	}
	return out
}

// Translated is a field's text in one language, each string falling back to the field's own.
func (f Field) Translated(lang string) FieldTranslation {
	out := FieldTranslation{Label: f.Label, Options: f.Options}
	if f.Placeholder != nil {
		out.Placeholder = *f.Placeholder
	}
	if f.Help != nil {
		out.Help = *f.Help
	}
	t, ok := f.Translations[lang]
	if !ok {
		return out
	}
	if t.Label != "" {
		out.Label = t.Label
	}
	if t.Placeholder != "" {
		out.Placeholder = t.Placeholder
	}
	if t.Help != "" {
		out.Help = t.Help
	}
	if len(t.Options) == len(f.Options) && len(t.Options) > 0 {
		out.Options = t.Options
	}
	return out
}

// MissingTranslations counts, per non-default language, the strings of the form and its
// fields that have an original but no translation (what the builder shows as "3 missing").
func (f *Form) MissingTranslations() map[string]int {
	if len(f.languages) < 2 {
		return nil
	}
	out := make(map[string]int, len(f.languages)-1)
	for _, lang := range f.languages[1:] {
		n := 0
		ft := f.translations[lang]
		miss := func(has bool, t string) {
			if has && t == "" {
				n++
			}
		}
		miss(true, ft.Name)
		miss(f.description != nil && *f.description != "", ft.Description)
		miss(f.settings.ThankYouMessage != nil && *f.settings.ThankYouMessage != "", ft.ThankYouMessage)
		miss(f.settings.Closing.Message != nil && *f.settings.Closing.Message != "", ft.ClosedMessage)
		for _, fl := range f.fields {
			t := fl.Translations[lang]
			miss(true, t.Label)
			miss(fl.Placeholder != nil && *fl.Placeholder != "", t.Placeholder)
			miss(fl.Help != nil && *fl.Help != "", t.Help)
			if len(t.Options) == 0 {
				n += len(fl.Options) // each option is a text to translate
			}
		}
		out[lang] = n
	}
	return out
}

// applyLanguages applies a patch's languages and translations to next (the form being
// patched): translations sent are checked against the languages the form will have;
// translations stored for a language the patch drops are dropped with it.
func applyLanguages(vs *domain.Violations, next *Form, p Patch) {
	if p.Languages != nil {
		next.languages = checkLanguages(vs, *p.Languages)
	}
	switch {
	case p.Fields != nil:
		next.fields = checkFieldTranslations(vs, next.fields, next.languages)
	case p.Languages != nil:
		next.fields, _ = dropTranslations(next.fields, next.languages)
	}
	switch {
	case p.Translations != nil:
		next.translations = checkFormTranslations(vs, *p.Translations, next.languages)
	case p.Languages != nil:
		next.translations = keptFormTranslations(next.translations, next.languages)
	}
}

// sameTranslations reports whether two fields' translations say the same (nil and empty alike).
func sameTranslations(a, b map[string]FieldTranslation) bool {
	if len(a) != len(b) {
		return false
	}
	for k, t := range a {
		u, ok := b[k]
		if !ok || t.Label != u.Label || t.Placeholder != u.Placeholder || t.Help != u.Help || !slices.Equal(t.Options, u.Options) {
			return false
		}
	}
	return true
}
