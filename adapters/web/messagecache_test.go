package web

import (
	"bytes"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/gin-gonic/gin"
)

// Every template input of a message page is in its cache key; a new field must be added to
// messageKey (these counts are the reminder).
func TestMessageKeyCoversMessagePage(t *testing.T) {
	for typ, want := range map[reflect.Type]int{
		reflect.TypeOf(messagePage{}): 2, reflect.TypeOf(messageData{}): 6, reflect.TypeOf(themeView{}): 5, reflect.TypeOf(langView{}): 10,
	} {
		if got := typ.NumField(); got != want {
			t.Errorf("%s has %d fields, messageKey knows %d: digest the new ones", typ, got, want)
		}
	}
}

// A kept message page is the page the template draws, one per distinct input; a page not to be
// kept (a thank-you that recalls answers) is not kept.
func TestCachedMessageEqualsRender(t *testing.T) {
	gin.SetMode(gin.ReleaseMode)
	h, err := New(Deps{}, Options{TokenKey: []byte("k"), PoWKey: []byte("p")})
	if err != nil {
		t.Fatal(err)
	}
	pages := []messagePage{
		{messageData{Title: "Thank you", Heading: "Thank you!", Message: `Merci <b>"&'+</b>`}, themeView{}},
		{messageData{Title: "Thank you", Heading: "Thank you!", Message: `Merci <b>"&'+</b> `}, themeView{}},
		{messageData{Title: "Thank you", Heading: "Thank you!", Message: "x"}, themeView{Class: "theme-dark", CSS: "/a.css", Logo: "/l.png", LogoWidth: 3, LogoHeight: 4}},
		{messageData{Title: "Thank you", Heading: "Thank you!", Message: "x"}, themeView{Class: "theme-dark", CSS: "/a.css", Logo: "/l.png", LogoWidth: 4, LogoHeight: 3}},
		{messageData{Title: "Danke", Heading: "Danke!", Message: "x", Lang: &langView{Tag: "de", Dir: "ltr"}}, themeView{}},
		{messageData{Title: "Danke", Heading: "Danke!", Message: "x", Lang: &langView{Tag: "ar", Dir: "rtl"}}, themeView{}},
		{messageData{Title: "Thank", Heading: "you", Message: "x"}, themeView{}},
		{messageData{Title: "Thankyou", Heading: "", Message: "x"}, themeView{}},
	}
	for round := range 2 {
		for i, mp := range pages {
			var want bytes.Buffer
			if err := h.tmpl.ExecuteTemplate(&want, "message.html", mp); err != nil {
				t.Fatal(err)
			}
			rec := httptest.NewRecorder()
			c, _ := gin.CreateTestContext(rec)
			h.renderMessage(c, 200, mp, true)
			if rec.Body.String() != want.String() {
				t.Fatalf("round %d, page %d: kept page differs from the render:\n%s\n%s", round, i, rec.Body.String(), want.String())
			}
		}
	}
	if len(h.messages.pages) != len(pages) {
		t.Fatalf("%d pages kept, want %d", len(h.messages.pages), len(pages))
	}
	rec := httptest.NewRecorder()
	c, _ := gin.CreateTestContext(rec)
	h.renderMessage(c, 200, messagePage{messageData{Title: "T", Heading: "H", Message: "Your answer: Ada"}, themeView{}}, false)
	if len(h.messages.pages) != len(pages) || !bytes.Contains(rec.Body.Bytes(), []byte("Your answer: Ada")) {
		t.Fatal("a page not to be kept was kept, or not drawn")
	}
}
