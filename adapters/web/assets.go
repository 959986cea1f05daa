package web

import (
	"html/template"
	"strings"
	"unicode/utf8"

	"github.com/formward/formward/adapters/httpkit"
)

// assets are the public pages' embedded files, served under /f/assets/.
var assets = httpkit.MustLoadAssets(assetFS, "/f/assets/")

// metaDescriptionMax is about what search engines and link previews show.
const metaDescriptionMax = 160

// head is what the pages' shared <head> needs: the title, a meta description and the theme.
type head struct {
	Title, Description string
	Theme              themeView
	// Lang and Dir are the <html> attributes: "en" and none on a form without languages.
	Lang, Dir string
}

// templateFuncs are the functions the page templates call besides the standard ones.
func templateFuncs() template.FuncMap {
	return template.FuncMap{
		"asset": assets.URL,
		// head builds the <head> data from a page's title and its descriptive text (the form's
		// description or the message); without one the description names the page.
		"head": makeHead,
		// headIn is head in the page's language (i18n.go).
		"headIn": func(title, text string, theme themeView, lang *langView) head {
			h := makeHead(title, text, theme)
			h.Lang, h.Dir = lang.HTMLLang(), lang.HTMLDir()
			return h
		},
		// worded gives a field's template the page's words.
		"worded": func(f fieldView, w *words) wordedField { return wordedField{f, w} },
	}
}

// makeHead builds the <head> data from a page's title and its descriptive text (the form's
// description or the message); without one the description names the page.
func makeHead(title, text string, theme themeView) head {
	text = strings.Join(strings.Fields(text), " ")
	if text == "" {
		text = title + ": fill in the form and send it."
	}
	if utf8.RuneCountInString(text) > metaDescriptionMax {
		r := []rune(text)[:metaDescriptionMax-1]
		text = strings.TrimRight(string(r), " ") + "…"
	}
	return head{Title: title, Description: text, Theme: theme, Lang: "en"}
}
