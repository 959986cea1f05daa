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
}

// templateFuncs are the functions the page templates call besides the standard ones.
func templateFuncs() template.FuncMap {
	return template.FuncMap{
		"asset": assets.URL,
		// head builds the <head> data from a page's title and its descriptive text (the form's
		// description or the message); without one the description names the page.
		"head": func(title, text string, theme themeView) head {
			text = strings.Join(strings.Fields(text), " ")
			if text == "" {
				text = title + ": fill in the form and send it."
			}
			if utf8.RuneCountInString(text) > metaDescriptionMax {
				r := []rune(text)[:metaDescriptionMax-1]
				text = strings.TrimRight(string(r), " ") + "…"
			}
			return head{Title: title, Description: text, Theme: theme}
		},
	}
}
