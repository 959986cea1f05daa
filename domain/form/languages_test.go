package form_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/formward/formward/domain/form"
)

func multilingualDraft() form.Draft {
	return form.Draft{
		Name:      "Feedback",
		Languages: []string{"en", "DE", "fr"},
		Translations: map[string]form.FormTranslation{
			"de": {Name: "Rückmeldung", ThankYouMessage: "Danke!"},
		},
		Fields: []form.FieldSpec{
			{Label: "Name", Type: "text", Translations: map[string]form.FieldTranslation{"de": {Label: "Name", Help: "Ihr Name"}}},
			{Label: "Colour", Type: "radio", Options: []string{"Red", "Blue"},
				Translations: map[string]form.FieldTranslation{"fr": {Label: "Couleur", Options: []string{"Rouge", "Bleu"}}}},
		},
	}
}

func TestLanguagesAreCanonicalAndTranslationsKept(t *testing.T) {
	ids, _ := seqIDs()
	f, err := form.New("frm_1", "wsp_1", multilingualDraft(), ids, form.DefaultLimits, t0)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Languages(); !reflect.DeepEqual(got, []string{"en", "de", "fr"}) {
		t.Fatalf("languages %v", got)
	}
	if f.DefaultLanguage() != "en" {
		t.Fatalf("default %q", f.DefaultLanguage())
	}
	if f.Translations()["de"].Name != "Rückmeldung" {
		t.Fatalf("translations %v", f.Translations())
	}
	colour := f.Fields()[1]
	if got := colour.Translated("fr"); got.Label != "Couleur" || !reflect.DeepEqual(got.Options, []string{"Rouge", "Bleu"}) {
		t.Fatalf("fr %+v", got)
	}
	// A missing translation falls back string by string to the field's own text.
	if got := colour.Translated("de"); got.Label != "Colour" || !reflect.DeepEqual(got.Options, []string{"Red", "Blue"}) {
		t.Fatalf("de %+v", got)
	}
	missing := f.MissingTranslations()
	// de: the Colour label and its two options are missing; fr: the name, the Name label.
	if missing["de"] != 3 || missing["fr"] != 2 {
		t.Fatalf("missing %v", missing)
	}
}

func TestSingleLanguageFormHasNoLanguages(t *testing.T) {
	f, _ := newForm(t, form.FieldSpec{Label: "A", Type: "text"})
	if f.Languages() != nil || f.DefaultLanguage() != "" || f.Translations() != nil || f.MissingTranslations() != nil {
		t.Fatal("a form without languages must stay single-language")
	}
}

func TestLanguageViolations(t *testing.T) {
	many := make([]string, form.MaxLanguages+1)
	for i := range many {
		many[i] = []string{"en", "de", "fr", "es", "pt", "nl", "it", "pl", "sv", "da", "fi", "nb", "cs", "sk", "hu", "ro", "el", "tr", "ar", "he", "ja"}[i]
	}
	cases := []struct {
		name       string
		edit       func(d *form.Draft)
		path, code string
	}{
		{"invalid tag", func(d *form.Draft) { d.Languages = []string{"en", "not a tag"} }, "languages[1]", "invalid_language"},
		{"duplicate after canonical form", func(d *form.Draft) { d.Languages = []string{"en", "de", "DE"} }, "languages[2]", "duplicate"},
		{"too many", func(d *form.Draft) { d.Languages = many }, "languages", "too_many"},
		{"form translation for an unlisted language", func(d *form.Draft) {
			d.Translations = map[string]form.FormTranslation{"es": {Name: "Comentarios"}}
		}, "translations.es", "unknown_language"},
		{"field translation for an unlisted language", func(d *form.Draft) {
			d.Fields[0].Translations = map[string]form.FieldTranslation{"it": {Label: "Nome"}}
		}, "fields[0].translations.it", "unknown_language"},
		{"translations without languages", func(d *form.Draft) { d.Languages = nil }, "fields[1].translations.fr", "unknown_language"},
		{"translation into the default language", func(d *form.Draft) {
			d.Fields[0].Translations = map[string]form.FieldTranslation{"en": {Label: "Name"}}
		}, "fields[0].translations.en", "default_language"},
		{"options of another count", func(d *form.Draft) {
			d.Fields[1].Translations = map[string]form.FieldTranslation{"fr": {Options: []string{"Rouge"}}}
		}, "fields[1].translations.fr.options", "count_mismatch"},
		{"empty translated option", func(d *form.Draft) {
			d.Fields[1].Translations = map[string]form.FieldTranslation{"fr": {Options: []string{"Rouge", " "}}}
		}, "fields[1].translations.fr.options[1]", "required"},
		{"label too long", func(d *form.Draft) {
			d.Fields[0].Translations = map[string]form.FieldTranslation{"de": {Label: strings.Repeat("x", 501)}}
		}, "fields[0].translations.de.label", "too_long"},
		{"name too long", func(d *form.Draft) {
			d.Translations = map[string]form.FormTranslation{"de": {Name: strings.Repeat("x", 201)}}
		}, "translations.de.name", "too_long"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := multilingualDraft()
			c.edit(&d)
			ids, _ := seqIDs()
			_, err := form.New("frm_1", "wsp_1", d, ids, form.DefaultLimits, t0)
			if vs := violations(t, err); !hasViolation(vs, c.path, c.code) {
				t.Fatalf("want %s %s, got %v", c.path, c.code, vs)
			}
		})
	}
}

func TestPatchLanguages(t *testing.T) {
	ids, _ := seqIDs()
	f, err := form.New("frm_1", "wsp_1", multilingualDraft(), ids, form.DefaultLimits, t0)
	if err != nil {
		t.Fatal(err)
	}
	// Dropping fr drops its translations and makes a new version (the fields changed).
	langs := []string{"en", "de"}
	if _, err := f.Apply(form.Patch{Languages: &langs}, ids, form.DefaultLimits, t1); err != nil {
		t.Fatal(err)
	}
	if f.Fields()[1].Translations != nil || f.Version() != 2 {
		t.Fatalf("fr translations kept: %+v (version %d)", f.Fields()[1].Translations, f.Version())
	}
	if f.Translations()["de"].Name != "Rückmeldung" {
		t.Fatal("de translation lost")
	}
	// Translations sent with a patch must name a listed language.
	tr := map[string]form.FormTranslation{"fr": {Name: "Avis"}}
	_, err = f.Apply(form.Patch{Translations: &tr}, ids, form.DefaultLimits, t1)
	if vs := violations(t, err); !hasViolation(vs, "translations.fr", "unknown_language") {
		t.Fatalf("got %v", vs)
	}
	if f.Translations()["de"].Name != "Rückmeldung" {
		t.Fatal("a refused patch changed the form")
	}
	// No languages at all: the form is single-language again.
	none := []string{}
	if _, err := f.Apply(form.Patch{Languages: &none}, ids, form.DefaultLimits, t1); err != nil {
		t.Fatal(err)
	}
	if f.Languages() != nil || f.Translations() != nil || f.Fields()[0].Translations != nil {
		t.Fatal("translations survived the removal of every language")
	}
}

func TestCanonicalLanguage(t *testing.T) {
	for in, want := range map[string]string{
		"en": "en", "EN_us": "en-US", "zh-hant-tw": "zh-Hant-TW", "pt-br": "pt-BR", "es-419": "es-419", "sr-Latn": "sr-Latn",
		"de-CH-1996": "de-CH-1996", "en-US-x-Twain": "en-US-x-twain", "ar": "ar",
	} {
		if got, ok := form.CanonicalLanguage(in); !ok || got != want {
			t.Errorf("%q: %q %v, want %q", in, got, ok, want)
		}
	}
	for _, bad := range []string{"", "e", "english language", "en--US", "en-", "x", "und", "abcd", "en-US-x", "<script>", "en-ÜS", "toolongtag1"} {
		if got, ok := form.CanonicalLanguage(bad); ok {
			t.Errorf("%q accepted as %q", bad, got)
		}
	}
}

func TestDiffNamesTranslations(t *testing.T) {
	before := form.Field{ID: "fld_1", Label: "Colour", Type: form.TypeText}
	after := before
	after.Translations = map[string]form.FieldTranslation{"de": {Label: "Farbe"}}
	d := form.DiffFields([]form.Field{before}, []form.Field{after})
	if len(d.Changes) != 1 || !reflect.DeepEqual(d.Changes[0].Aspects, []string{form.AspectTranslations}) {
		t.Fatalf("diff %+v", d.Changes)
	}
}
