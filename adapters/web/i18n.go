package web

import (
	"github.com/gin-gonic/gin"

	"net/http"
	"net/url"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/language"
	"golang.org/x/text/language/display"

	"github.com/formward/formward/adapters/httperr"
	"github.com/formward/formward/domain/form"
)

// The public page's own words (buttons, progress, notes, error messages) in the languages
// Formward ships. The catalogue is a plain map per language: a few dozen strings do not need
// golang.org/x/text/message, and a missing word falls back to English. A form without
// languages is drawn with the English words exactly as before.

// words are the page's own words in one language.
type words struct {
	Next, Back, Submit string
	// SaveLater is the save-and-resume button (settings.partial).
	SaveLater string
	// StepOf is "Step %d of %d" with {n} and {count}.
	StepOf string
	// RequiredBefore and RequiredAfter surround the star of "Fields marked * are required.";
	// RequiredHidden is the screen reader's word for the star, RequiredLabel the one after a label.
	RequiredBefore, RequiredAfter, RequiredHidden, RequiredLabel string
	ErrorPrefix                                                  string
	// ProblemOne and ProblemMany head the error summary; ProblemMany holds {count}.
	ProblemOne, ProblemMany                   string
	Choose                                    string
	ThankTitle, ThankHeading, ThankMessage    string
	ClosedTitle, ClosedHeading, ClosedMessage string
	// Languages names the language switcher; LangNotice is the notice of a ?lang= the form
	// lacks ({asked}, {shown}).
	Languages, LangNotice string
	// Errors are the field error messages by violation code; Invalid the message of any other.
	Errors  map[string]string
	Invalid string
	// Sending is what the page's script shows while it holds or sends the final post.
	Sending string
}

// english are the words the page has always had.
var english = &words{
	Next: "Next", Back: "Back", Submit: "Submit", SaveLater: "Save and continue later", StepOf: "Step {n} of {count}",
	RequiredBefore: "Fields marked ", RequiredAfter: " are required.", RequiredHidden: "required", RequiredLabel: "(required)",
	ErrorPrefix: "Error: ", ProblemOne: "There is a problem with your response", ProblemMany: "There are {count} problems with your response",
	Choose: "Choose…", ThankTitle: "Thank you", ThankHeading: "Thank you!", ThankMessage: "Your response has been recorded.",
	ClosedTitle: "Form closed", ClosedHeading: "This form is closed", ClosedMessage: "It no longer accepts responses.",
	Languages: "Languages", LangNotice: "This form is not available in {asked}, so it is shown in {shown}.",
	Errors: map[string]string{
		"required": "This field is required.", "too_long": "This answer is too long.", "invalid_email": "Enter one email address, like name@example.com.",
		"invalid_type": "Enter a number.", "invalid_number": "Enter a number.", "invalid_option": "Choose one of the options.",
		"invalid_date": "Enter a real date, like 2024-05-31.", "too_many_files": "Too many files.",
	},
	Invalid: "This answer is not valid.", Sending: "Sending…",
}

// catalogue holds the page's words by base language.
var catalogue = map[string]*words{
	"en": english,
	"de": {
		Next: "Weiter", Back: "Zurück", Submit: "Absenden", SaveLater: "Speichern und später fortfahren", StepOf: "Schritt {n} von {count}",
		RequiredBefore: "Mit ", RequiredAfter: " markierte Felder sind Pflichtfelder.", RequiredHidden: "Pflichtfeld", RequiredLabel: "(Pflichtfeld)",
		ErrorPrefix: "Fehler: ", ProblemOne: "Ihre Antwort enthält einen Fehler", ProblemMany: "Ihre Antwort enthält {count} Fehler",
		Choose: "Bitte wählen…", ThankTitle: "Vielen Dank", ThankHeading: "Vielen Dank!", ThankMessage: "Ihre Antwort wurde gespeichert.",
		ClosedTitle: "Formular geschlossen", ClosedHeading: "Dieses Formular ist geschlossen", ClosedMessage: "Es nimmt keine Antworten mehr an.",
		Languages: "Sprachen", LangNotice: "Dieses Formular gibt es nicht auf {asked}, daher wird es auf {shown} angezeigt.",
		Errors: map[string]string{
			"required": "Dieses Feld ist erforderlich.", "too_long": "Diese Antwort ist zu lang.", "invalid_email": "Geben Sie eine E-Mail-Adresse ein, z. B. name@example.com.",
			"invalid_type": "Geben Sie eine Zahl ein.", "invalid_number": "Geben Sie eine Zahl ein.", "invalid_option": "Wählen Sie eine der Optionen.",
			"invalid_date": "Geben Sie ein gültiges Datum ein, z. B. 2024-05-31.", "too_many_files": "Zu viele Dateien.",
		},
		Invalid: "Diese Antwort ist ungültig.", Sending: "Wird gesendet…",
	},
	"fr": {
		Next: "Suivant", Back: "Retour", Submit: "Envoyer", SaveLater: "Enregistrer et continuer plus tard", StepOf: "Étape {n} sur {count}",
		RequiredBefore: "Les champs marqués ", RequiredAfter: " sont obligatoires.", RequiredHidden: "obligatoire", RequiredLabel: "(obligatoire)",
		ErrorPrefix: "Erreur : ", ProblemOne: "Votre réponse comporte une erreur", ProblemMany: "Votre réponse comporte {count} erreurs",
		Choose: "Choisir…", ThankTitle: "Merci", ThankHeading: "Merci !", ThankMessage: "Votre réponse a été enregistrée.",
		ClosedTitle: "Formulaire fermé", ClosedHeading: "Ce formulaire est fermé", ClosedMessage: "Il n’accepte plus de réponses.",
		Languages: "Langues", LangNotice: "Ce formulaire n’existe pas en {asked} : il est affiché en {shown}.",
		Errors: map[string]string{
			"required": "Ce champ est obligatoire.", "too_long": "Cette réponse est trop longue.", "invalid_email": "Saisissez une adresse e-mail, par exemple nom@example.com.",
			"invalid_type": "Saisissez un nombre.", "invalid_number": "Saisissez un nombre.", "invalid_option": "Choisissez l’une des options.",
			"invalid_date": "Saisissez une date valide, par exemple 2024-05-31.", "too_many_files": "Trop de fichiers.",
		},
		Invalid: "Cette réponse n’est pas valide.", Sending: "Envoi…",
	},
	"es": {
		Next: "Siguiente", Back: "Atrás", Submit: "Enviar", SaveLater: "Guardar y continuar más tarde", StepOf: "Paso {n} de {count}",
		RequiredBefore: "Los campos marcados con ", RequiredAfter: " son obligatorios.", RequiredHidden: "obligatorio", RequiredLabel: "(obligatorio)",
		ErrorPrefix: "Error: ", ProblemOne: "Hay un problema con su respuesta", ProblemMany: "Hay {count} problemas con su respuesta",
		Choose: "Elegir…", ThankTitle: "Gracias", ThankHeading: "¡Gracias!", ThankMessage: "Su respuesta ha sido registrada.",
		ClosedTitle: "Formulario cerrado", ClosedHeading: "Este formulario está cerrado", ClosedMessage: "Ya no acepta respuestas.",
		Languages: "Idiomas", LangNotice: "Este formulario no está disponible en {asked}, por eso se muestra en {shown}.",
		Errors: map[string]string{
			"required": "Este campo es obligatorio.", "too_long": "Esta respuesta es demasiado larga.", "invalid_email": "Escriba una dirección de correo, como nombre@example.com.",
			"invalid_type": "Escriba un número.", "invalid_number": "Escriba un número.", "invalid_option": "Elija una de las opciones.",
			"invalid_date": "Escriba una fecha real, como 2024-05-31.", "too_many_files": "Demasiados archivos.",
		},
		Invalid: "Esta respuesta no es válida.", Sending: "Enviando…",
	},
	"pt": {
		Next: "Seguinte", Back: "Voltar", Submit: "Enviar", SaveLater: "Guardar e continuar mais tarde", StepOf: "Passo {n} de {count}",
		RequiredBefore: "Os campos marcados com ", RequiredAfter: " são obrigatórios.", RequiredHidden: "obrigatório", RequiredLabel: "(obrigatório)",
		ErrorPrefix: "Erro: ", ProblemOne: "Há um problema com a sua resposta", ProblemMany: "Há {count} problemas com a sua resposta",
		Choose: "Escolher…", ThankTitle: "Obrigado", ThankHeading: "Obrigado!", ThankMessage: "A sua resposta foi registada.",
		ClosedTitle: "Formulário fechado", ClosedHeading: "Este formulário está fechado", ClosedMessage: "Já não aceita respostas.",
		Languages: "Idiomas", LangNotice: "Este formulário não está disponível em {asked}, por isso é mostrado em {shown}.",
		Errors: map[string]string{
			"required": "Este campo é obrigatório.", "too_long": "Esta resposta é demasiado longa.", "invalid_email": "Escreva um endereço de email, como nome@example.com.",
			"invalid_type": "Escreva um número.", "invalid_number": "Escreva um número.", "invalid_option": "Escolha uma das opções.",
			"invalid_date": "Escreva uma data real, como 2024-05-31.", "too_many_files": "Demasiados ficheiros.",
		},
		Invalid: "Esta resposta não é válida.", Sending: "A enviar…",
	},
	"nl": {
		Next: "Volgende", Back: "Terug", Submit: "Versturen", SaveLater: "Opslaan en later verdergaan", StepOf: "Stap {n} van {count}",
		RequiredBefore: "Velden met ", RequiredAfter: " zijn verplicht.", RequiredHidden: "verplicht", RequiredLabel: "(verplicht)",
		ErrorPrefix: "Fout: ", ProblemOne: "Er is een probleem met uw antwoord", ProblemMany: "Er zijn {count} problemen met uw antwoord",
		Choose: "Kies…", ThankTitle: "Bedankt", ThankHeading: "Bedankt!", ThankMessage: "Uw antwoord is opgeslagen.",
		ClosedTitle: "Formulier gesloten", ClosedHeading: "Dit formulier is gesloten", ClosedMessage: "Het neemt geen antwoorden meer aan.",
		Languages: "Talen", LangNotice: "Dit formulier is niet beschikbaar in het {asked}, daarom wordt het in het {shown} getoond.",
		Errors: map[string]string{
			"required": "Dit veld is verplicht.", "too_long": "Dit antwoord is te lang.", "invalid_email": "Vul één e-mailadres in, zoals naam@example.com.",
			"invalid_type": "Vul een getal in.", "invalid_number": "Vul een getal in.", "invalid_option": "Kies een van de opties.",
			"invalid_date": "Vul een echte datum in, zoals 2024-05-31.", "too_many_files": "Te veel bestanden.",
		},
		Invalid: "Dit antwoord is niet geldig.", Sending: "Bezig met versturen…",
	},
}

// wordsFor returns the page's words for a language tag (its base language), English when
// Formward has none for it.
func wordsFor(tag string) *words {
	if w := byBase(catalogue, tag); w != nil {
		return w
	}
	return english
}

// byBase finds a language's entry of a catalogue: the tag itself, else its base language;
// nil when there is neither.
func byBase[T any](c map[string]*T, tag string) *T {
	if tag == "" {
		return nil
	}
	if w, ok := c[tag]; ok {
		return w
	}
	if t, err := language.Parse(tag); err == nil {
		b, _ := t.Base()
		return c[b.String()]
	}
	return nil
}

// Steps is the progress line "Step n of count".
func (w *words) Steps(n, count int) string {
	return strings.NewReplacer("{n}", itoa(n), "{count}", itoa(count)).Replace(w.StepOf)
}

// Problems heads the error summary.
func (w *words) Problems(count int) string {
	if count == 1 {
		return w.ProblemOne
	}
	return strings.ReplaceAll(w.ProblemMany, "{count}", itoa(count))
}

// fieldMessage is the message of a field's violation code.
func (w *words) fieldMessage(code string) string {
	if m, ok := w.Errors[code]; ok {
		return m
	}
	if m, ok := english.Errors[code]; ok && w == english {
		return m
	}
	return w.Invalid
}

// rtlBases are the base languages written right to left.
var rtlBases = map[string]bool{"ar": true, "he": true, "fa": true, "ur": true, "yi": true, "ps": true, "sd": true, "ug": true, "dv": true, "ckb": true, "syr": true}

// dirOf is "rtl" for a language written right to left, else "ltr".
func dirOf(tag string) string {
	if t, err := language.Parse(tag); err == nil {
		b, _ := t.Base()
		if rtlBases[b.String()] {
			return "rtl"
		}
	}
	return "ltr"
}

// nativeName is a language's name in itself ("Deutsch"), or the tag.
func nativeName(tag string) string {
	t, err := language.Parse(tag)
	if err != nil {
		return tag
	}
	if n := display.Self.Name(t); n != "" {
		// As a menu item: "Français", "Español".
		r, size := utf8.DecodeRuneInString(n)
		return string(unicode.ToUpper(r)) + n[size:]
	}
	return tag
}

// nameIn is a language's name in another language ("German" in English), or its own name.
func nameIn(tag, in string) string {
	t, err1 := language.Parse(tag)
	l, err2 := language.Parse(in)
	if err1 != nil || err2 != nil {
		return tag
	}
	if n := display.Languages(l).Name(t); n != "" {
		return n
	}
	return nativeName(tag)
}

// langView is the page's language as the templates use it: the <html lang dir> attributes,
// the words, and the links (or buttons) to the form's other languages. Tag is "" on a form
// without languages.
type langView struct {
	Tag, Dir string
	Others   []langLink
	// Buttons: the switcher posts the answers (a page drawn with answers); else plain links.
	Buttons bool
	Label   string
	// The page's words for the browser's own checks (the page's script shows them).
	MsgRequired, MsgEmail, MsgNumber, MsgInvalid, MsgSending string
}

// HTMLLang is the value of <html lang>: the form's language, English for a form without.
func (l *langView) HTMLLang() string {
	if l == nil || l.Tag == "" {
		return "en"
	}
	return l.Tag
}

// HTMLDir is the value of <html dir>, empty (no attribute) for a form without languages.
func (l *langView) HTMLDir() string {
	if l == nil || l.Tag == "" {
		return ""
	}
	return l.Dir
}

// langLink is one of the form's other languages in the switcher.
type langLink struct{ Tag, Name, Href string }

// matchers are the language matchers of the forms' language lists (a matcher is costly to
// build and safe for concurrent use), cleared when full.
var matchers struct {
	sync.RWMutex
	m map[string]language.Matcher
}

// matcherFor is the matcher of a form's languages (default first).
func matcherFor(langs []string) language.Matcher {
	key := strings.Join(langs, ",")
	matchers.RLock()
	m, ok := matchers.m[key]
	matchers.RUnlock()
	if ok {
		return m
	}
	tags := make([]language.Tag, 0, len(langs))
	for _, l := range langs {
		tags = append(tags, language.Make(l))
	}
	m = language.NewMatcher(tags)
	matchers.Lock()
	if matchers.m == nil || len(matchers.m) >= 1024 {
		matchers.m = make(map[string]language.Matcher)
	}
	matchers.m[key] = m
	matchers.Unlock()
	return m
}

// pickLanguage chooses the page's language among the form's: a posted _lang (the language
// the page had), else ?lang=, else the best Accept-Language match, else the default. A ?lang=
// the form lacks falls back to the best other choice with a notice (in the chosen language).
// A form without languages has none ("").
func pickLanguage(f *form.Form, r *http.Request, posted string) (tag, notice string) {
	langs := f.Languages()
	if len(langs) == 0 {
		return "", ""
	}
	m := matcherFor(langs)
	best := func(asked ...language.Tag) (string, bool) {
		_, i, conf := m.Match(asked...)
		if conf == language.No {
			return langs[0], false
		}
		return langs[i], true
	}
	if posted != "" {
		if c, ok := form.CanonicalLanguage(posted); ok {
			for _, l := range langs {
				if l == c {
					return l, ""
				}
			}
		}
	}
	fromHeader := func() string {
		accept, _, err := language.ParseAcceptLanguage(r.Header.Get("Accept-Language"))
		if err != nil || len(accept) == 0 {
			return langs[0]
		}
		l, _ := best(accept...)
		return l
	}
	if q := r.URL.Query().Get("lang"); q != "" {
		c, ok := form.CanonicalLanguage(q)
		if ok {
			for _, l := range langs {
				if l == c {
					return l, ""
				}
			}
		}
		shown := ""
		if ok {
			if l, found := best(language.Make(c)); found {
				shown = l
			}
		}
		if shown == "" {
			shown = fromHeader()
		}
		asked := q
		if ok {
			asked = nameIn(c, shown)
		}
		if len([]rune(asked)) > 40 {
			asked = string([]rune(asked)[:40]) + "…"
		}
		w := wordsFor(shown)
		return shown, strings.NewReplacer("{asked}", asked, "{shown}", nativeName(shown)).Replace(w.LangNotice)
	}
	return fromHeader(), ""
}

// localize draws data in lang: the form's and the fields' translations (each string falling
// back to the default language's), the page's own words, the field errors of codes (field ID
// → violation code) in those words, and the language switcher. Option values stay the
// default language's: only what the respondent reads changes. A form without languages
// (lang "") keeps the English words and no switcher.
// query is the page URL's query on a GET: the switcher's links keep it (UTM, prefill), with
// lang changed.
func localize(data *pageData, f *form.Form, lang string, codes map[string]string, withAnswers bool, query url.Values) {
	if lang == "" {
		return
	}
	w := wordsFor(lang)
	data.W = w
	data.Lang = &langView{Tag: lang, Dir: dirOf(lang), Buttons: withAnswers, Label: w.Languages,
		MsgRequired: w.fieldMessage("required"), MsgEmail: w.fieldMessage("invalid_email"), MsgNumber: w.fieldMessage("invalid_number"),
		MsgInvalid: w.Invalid, MsgSending: w.Sending}
	for _, l := range f.Languages() {
		if l != lang {
			q := url.Values{}
			for k, v := range query {
				q[k] = v
			}
			q.Set("lang", l)
			data.Lang.Others = append(data.Lang.Others, langLink{Tag: l, Name: nativeName(l), Href: data.Action + "?" + q.Encode()})
		}
	}
	if lang == f.DefaultLanguage() && len(codes) == 0 {
		return
	}
	if lang != f.DefaultLanguage() {
		if t, ok := f.Translations()[lang]; ok {
			if t.Name != "" {
				data.Title = t.Name
			}
			if t.Description != "" {
				data.Description = t.Description
			}
		}
	}
	byID := make(map[string]form.Field, len(f.Fields()))
	for _, fl := range f.Fields() {
		byID[fl.ID] = fl
	}
	summary := make(map[string]string, len(data.Errors))
	for i := range data.Fields {
		v := &data.Fields[i]
		fl, ok := byID[v.ID]
		if !ok {
			continue
		}
		t := fl.Translated(lang)
		v.Label, v.Placeholder = t.Label, t.Placeholder
		if v.Help != "" && strings.TrimSpace(t.Help) != "" {
			v.Help = t.Help
		}
		for j := range v.Options {
			if j < len(t.Options) {
				v.Options[j].Label = t.Options[j]
			}
		}
		if code, bad := codes[v.ID]; bad && v.Error != "" {
			v.Error = w.fieldMessage(code)
			summary[v.FirstID()] = v.Label + ": " + v.Error
		}
	}
	for i := range data.Errors {
		if m, ok := summary[data.Errors[i].Target]; ok {
			data.Errors[i].Message = m
		}
	}
}

// fieldCodes are the violation codes of a 422 by field ID (the first per field), as
// fieldErrors takes their messages.
func fieldCodes(b httperr.Body) map[string]string {
	codes := map[string]string{}
	for _, d := range b.Details {
		if _, seen := codes[d.Field]; !seen {
			codes[d.Field] = d.Code
		}
	}
	return codes
}

// thankYouIn is the thank-you message in lang: the owner's translation, else the owner's
// message, else the page's own words.
func thankYouIn(f *form.Form, lang string) (title, heading, msg string) {
	w := wordsFor(lang)
	s := f.Settings()
	msg = w.ThankMessage
	if s.ThankYouMessage != nil && *s.ThankYouMessage != "" {
		msg = *s.ThankYouMessage
	}
	if t := f.Translations()[lang]; t.ThankYouMessage != "" {
		msg = t.ThankYouMessage
	}
	return w.ThankTitle, w.ThankHeading, msg
}

// closedIn is the closed page's words in lang, with the owner's message (translated when it
// is) in place of the default one.
func closedIn(f *form.Form, lang, ownerMessage string) (title, heading, msg string) {
	w := wordsFor(lang)
	msg = w.ClosedMessage
	if ownerMessage != "" {
		msg = ownerMessage
	}
	if t := f.Translations()[lang]; ownerMessage != "" && t.ClosedMessage != "" {
		msg = t.ClosedMessage
	}
	return w.ClosedTitle, w.ClosedHeading, msg
}

// wordedField is a field with the page's words, as the field templates draw it.
type wordedField struct {
	fieldView
	W *words
}

// localMessage is a message page (thank-you, closed) in lang.
func (h *Handler) localMessage(c *gin.Context, status int, s *form.Settings, theme themeView, lang, title, heading, msg string) {
	h.securityHeaders(c, s)
	l := &langView{Tag: lang, Dir: dirOf(lang)}
	h.renderMessage(c, status, messagePage{messageData{Title: title, Heading: heading, Message: msg, Lang: l}, theme}, true)
}

// closedInLanguage draws the closed page of a form with languages in the page's language
// (?lang=, Accept-Language, the default); it reports false for a form without languages.
func (h *Handler) closedInLanguage(c *gin.Context, status int, f *form.Form, ownerMessage string) bool {
	lang, _ := pickLanguage(f, c.Request, "")
	if lang == "" {
		return false
	}
	s := f.Settings()
	title, heading, msg := closedIn(f, lang, ownerMessage)
	h.localMessage(c, status, &s, themeOf(f.ID(), s.Theme), lang, title, heading, msg)
	return true
}
