package web_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/formward/formward/adapters/httpkit"
	"github.com/formward/formward/application/forms"
	"github.com/formward/formward/domain/form"
)

// multilingualForm: English (default), German and French; a radio with translated options on
// page 1, a required name on page 2, a required email on page 3.
func multilingualForm(h *harness, languages ...string) (*form.Form, map[string]string) {
	h.t.Helper()
	if languages == nil {
		languages = []string{"en", "de", "fr"}
	}
	thanks := "Thanks for your feedback."
	s := lenient()
	s.ThankYouMessage = &thanks
	d := form.Draft{Name: "Feedback", Settings: s, Languages: languages,
		Translations: map[string]form.FormTranslation{
			"de": {Name: "Rückmeldung", ThankYouMessage: "Danke für Ihre Rückmeldung."},
			"fr": {Name: "Avis"},
		},
		Fields: []form.FieldSpec{
			{Label: "Colour", Type: "radio", Options: []string{"Red", "Blue"}, Required: true,
				Translations: map[string]form.FieldTranslation{
					"de": {Label: "Farbe", Options: []string{"Rot", "Blau"}},
					"fr": {Label: "Couleur", Options: []string{"Rouge", "Bleu"}},
				}},
			{Label: "Name", Type: "text", Required: true, Page: intp(2), Help: ptr("Your full name"),
				Translations: map[string]form.FieldTranslation{"de": {Help: "Ihr vollständiger Name"}}},
			{Label: "Email", Type: "email", Required: true, Page: intp(3),
				Translations: map[string]form.FieldTranslation{"de": {Label: "E-Mail"}, "fr": {Label: "Courriel"}}},
		},
	}
	// Keep the translations into the languages asked for.
	for tag := range d.Translations {
		if !slices.Contains(languages[min(1, len(languages)):], tag) {
			delete(d.Translations, tag)
		}
	}
	for i := range d.Fields {
		for tag := range d.Fields[i].Translations {
			if !slices.Contains(languages[min(1, len(languages)):], tag) {
				delete(d.Fields[i].Translations, tag)
			}
		}
	}
	ctx := h.owner(context.Background())
	v, err := h.app.Commands.CreateForm.Handle(ctx, forms.CreateForm{Draft: d})
	if err != nil {
		h.t.Fatal(err)
	}
	st := string(form.StatusPublished)
	if v, err = h.app.Commands.UpdateForm.Handle(ctx, forms.UpdateForm{ID: v.Form.ID(), Patch: form.Patch{Status: &st}}); err != nil {
		h.t.Fatal(err)
	}
	ids := map[string]string{}
	for _, fl := range v.Form.Fields() {
		ids[fl.Key] = fl.ID
	}
	return v.Form, ids
}

func (h *harness) getWith(path string, headers ...string) string {
	h.t.Helper()
	req := httptest.NewRequest("GET", path, nil)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	rec := h.do(req)
	if rec.Code != 200 {
		h.t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body.String())
	}
	return rec.Body.String()
}

func mustContain(t *testing.T, page string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(page, w) {
			t.Fatalf("the page lacks %q:\n%s", w, page)
		}
	}
}

func TestLanguageChoiceOfThePage(t *testing.T) {
	h := newHarness(t)
	f, _ := multilingualForm(h)
	path := "/f/" + f.ID()

	// Accept-Language picks German: lang and dir set, the form's and the page's words in German,
	// option values still the default language's.
	de := h.getWith(path, "Accept-Language", "de-CH,de;q=0.9,en;q=0.5")
	mustContain(t, de, `<html lang="de" dir="ltr"`, "<h1>Rückmeldung</h1>", "Farbe", `value="Red"`, `>Rot</label>`, "Schritt 1 von 3", "Weiter",
		"markierte Felder sind Pflichtfelder", `name="_lang" value="de"`, `href="/f/`+f.ID()+`?lang=fr"`, "Français")
	// Twice: the cached page keeps the language apart.
	if again := h.getWith(path, "Accept-Language", "de"); again != replaceTokens(de, again) {
		t.Fatal("the cached German page differs")
	}
	// ?lang=fr wins over the header.
	fr := h.getWith(path+"?lang=fr", "Accept-Language", "de")
	mustContain(t, fr, `<html lang="fr" dir="ltr"`, "<h1>Avis</h1>", "Couleur", `>Rouge</label>`, "Étape 1 sur 3", "Suivant")
	// No header: the default language.
	en := h.getWith(path)
	mustContain(t, en, `<html lang="en" dir="ltr"`, "<h1>Feedback</h1>", "Step 1 of 3", `href="/f/`+f.ID()+`?lang=de"`, "Deutsch")
	if strings.Contains(en, "Rückmeldung") {
		t.Fatal("German on the English page")
	}
	// A tag the form lacks: the best other choice, with a notice that says so; never an error.
	es := h.getWith(path+"?lang=es", "Accept-Language", "de")
	mustContain(t, es, `<html lang="de"`, `id="fw-notice"`, "Dieses Formular gibt es nicht auf Spanisch")
	bad := h.getWith(path + "?lang=%3Cscript%3E")
	mustContain(t, bad, `<html lang="en"`, `id="fw-notice"`, "&lt;script&gt;")
	if strings.Contains(bad, "<script>") {
		t.Fatal("the tag was not escaped")
	}
	// The links keep the page URL's query (a campaign, a prefilled answer).
	utm := h.getWith(path+"?utm_source=news&lang=de", "Accept-Language", "fr")
	mustContain(t, utm, `<html lang="de"`, `href="/f/`+f.ID()+`?lang=fr&amp;utm_source=news"`, `name="_utm_source" value="news"`)
	// A language written right to left.
	h2 := newHarness(t)
	g, _ := multilingualForm(h2, "en", "ar")
	mustContain(t, h2.getWith("/f/"+g.ID()+"?lang=ar"), `<html lang="ar" dir="rtl"`)
}

var tokenValueRe = regexp.MustCompile(`name="_token" value="[^"]+"`)

// replaceTokens returns a with b's render token, so two views compare equal but for it.
func replaceTokens(a, b string) string {
	return tokenValueRe.ReplaceAllString(a, tokenValueRe.FindString(b))
}

func TestSingleLanguagePageIsUnchanged(t *testing.T) {
	h := newHarness(t)
	f, _ := multilingualForm(h, []string{}...)
	page := h.getWith("/f/"+f.ID()+"?lang=de", "Accept-Language", "de")
	mustContain(t, page, `<html lang="en">`, "<h1>Feedback</h1>", "Step 1 of 3", "Next", "Fields marked ")
	if strings.Contains(page, "_lang") || strings.Contains(page, `class="languages"`) || strings.Contains(page, "dir=") {
		t.Fatalf("a single-language form shows language parts: %s", page)
	}
}

func TestGermanPagesKeepTheLanguageAndStoreDefaultValues(t *testing.T) {
	h := newHarness(t)
	f, ids := multilingualForm(h)
	path := "/f/" + f.ID()
	first := h.getWith(path, "Accept-Language", "de")
	v := hiddenInputs(first)
	v.Set("_nav", "next")
	// Next without the required colour: the German error message, in German words.
	rec := h.postForm(path+"/page", v)
	page := rec.Body.String()
	if rec.Code != 422 {
		t.Fatalf("next: %d %s", rec.Code, page)
	}
	mustContain(t, page, `<html lang="de"`, "Dieses Feld ist erforderlich.", "Ihre Antwort enthält einen Fehler", "Farbe: Dieses Feld ist erforderlich.", `name="_lang" value="de"`)
	// Page 2 in German; its switcher posts the answers ("Français") to switch language.
	v.Set(ids["colour"], "Blue")
	page = h.postForm(path+"/page", v).Body.String()
	mustContain(t, page, "Schritt 2 von 3", "Ihr vollständiger Name", `name="_switch" value="fr"`)
	sw := hiddenInputs(page)
	sw.Set(ids["name"], "Ada")
	sw.Set("_switch", "fr")
	page = h.postForm(path+"/page", sw).Body.String()
	mustContain(t, page, `<html lang="fr"`, "Étape 2 sur 3", `value="Ada"`, `name="_lang" value="fr"`)
	// Back in German, on to page 3, and the final post.
	sw.Del("_switch")
	sw.Set("_lang", "de")
	sw.Set("_nav", "next")
	page = h.postForm(path+"/page", sw).Body.String()
	mustContain(t, page, "Schritt 3 von 3", "E-Mail", "Absenden")
	last := hiddenInputs(page)
	last.Set(ids["email"], "not an email")
	last.Del("_page")
	rec = h.postForm(path, last)
	mustContain(t, rec.Body.String(), "Geben Sie eine E-Mail-Adresse ein")
	last.Set(ids["email"], "ada@example.com")
	rec = h.postForm(path, last)
	if rec.Code != 200 {
		t.Fatalf("final post: %d %s", rec.Code, rec.Body.String())
	}
	mustContain(t, rec.Body.String(), `<html lang="de"`, "Vielen Dank!", "Danke für Ihre Rückmeldung.")
	subs := h.submissions(f)
	if len(subs) != 1 {
		t.Fatalf("%d submissions", len(subs))
	}
	s := subs[0]
	if s.Data()[ids["colour"]].String() != "Blue" {
		t.Fatalf("the colour was not stored in the default language: %v", s.Data())
	}
	if l := s.Metadata().Language; l == nil || *l != "de" {
		t.Fatalf("metadata.language %v", l)
	}
	// The API shows it as metadata.language.
	if j, _ := json.Marshal(httpkit.PresentSubmission(s, httpkit.KeepValue)); !strings.Contains(string(j), `"language":"de"`) {
		t.Fatalf("API submission %s", j)
	}
}

func TestClosedAndPlainFormsHaveNoLanguage(t *testing.T) {
	h := newHarness(t)
	f := h.form(form.StatusPublished, lenient(), form.FieldSpec{Label: "A", Type: "text"})
	tok, _ := h.page(f, "")
	rec := h.postForm("/f/"+f.ID(), url.Values{"_token": {tok}, f.Fields()[0].ID: {"x"}})
	if rec.Code != 200 {
		t.Fatalf("post: %d", rec.Code)
	}
	if l := h.submissions(f)[0].Metadata().Language; l != nil {
		t.Fatalf("a single-language form recorded a language: %v", *l)
	}
	mustContain(t, rec.Body.String(), `<html lang="en">`, "Thank you!")
}

func TestClosedPageInTheRespondentsLanguage(t *testing.T) {
	h := newHarness(t)
	f, _ := multilingualForm(h)
	ctx := h.owner(context.Background())
	msg := "We are closed."
	s := f.Settings()
	s.Closing.Message = &msg
	tr := f.Translations()
	de := tr["de"]
	de.ClosedMessage = "Wir haben geschlossen."
	tr["de"] = de
	st := string(form.StatusArchived)
	if _, err := h.app.Commands.UpdateForm.Handle(ctx, forms.UpdateForm{ID: f.ID(), Patch: form.Patch{Settings: &s, Translations: &tr}}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.app.Commands.UpdateForm.Handle(ctx, forms.UpdateForm{ID: f.ID(), Patch: form.Patch{Status: &st}}); err != nil {
		t.Fatal(err)
	}
	page := h.getWith("/f/"+f.ID(), "Accept-Language", "de")
	mustContain(t, page, `<html lang="de" dir="ltr"`, "Dieses Formular ist geschlossen")
	mustContain(t, h.getWith("/f/"+f.ID()+"?lang=fr"), `<html lang="fr"`, "Ce formulaire est fermé")
}
