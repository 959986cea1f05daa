package web_test

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/png"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/formward/formward/application/forms"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
)

// pngOf is a w×h PNG image.
func pngOf(t *testing.T, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewRGBA(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestThemedPublicPage(t *testing.T) {
	store := localStore(t)
	h := newHarnessWith(t, store, submission.FileLimits{}, zap.NewNop())
	plain := h.form(form.StatusPublished, lenient())
	accent := "#2563EB"
	s := *lenient()
	s.Theme = form.Theme{Accent: &accent, Appearance: form.AppearanceAuto}
	f := h.form(form.StatusPublished, &s)
	image := pngOf(t, 3, 2)
	v, err := h.app.Commands.SetFormLogo.Handle(h.owner(context.Background()), forms.SetFormLogo{ID: f.ID(), Data: image})
	if err != nil {
		t.Fatal(err)
	}
	logo := v.Form.Settings().Theme.Logo
	if logo == nil || logo.Width != 3 || logo.Height != 2 || logo.ContentType != "image/png" {
		t.Fatalf("logo %+v", logo)
	}

	plainRec := h.get("/f/" + plain.ID())
	if p := body(plainRec); strings.Contains(p, "theme.css") || strings.Contains(p, `<html lang="en" class`) || strings.Contains(p, `class="logo"`) {
		t.Fatalf("an unthemed page carries a theme:\n%s", p)
	}
	rec := h.get("/f/" + f.ID())
	page := body(rec)
	for _, want := range []string{
		`<html lang="en" class="theme-auto">`,
		`<link rel="stylesheet" href="/f/` + f.ID() + `/theme.css?v=1-2563eb">`,
		`<img class="logo" src="/f/` + f.ID() + `/logo/` + logo.Version + `" alt="" width="3" height="2">`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	if strings.Contains(page, "style=") || strings.Contains(page, "<style") {
		t.Error("the page carries an inline style")
	}
	// The theme changes no security header: the CSP is exactly the unthemed form's.
	for _, hd := range []string{"Content-Security-Policy", "X-Frame-Options", "X-Content-Type-Options", "Cache-Control"} {
		if got, want := rec.Header().Get(hd), plainRec.Header().Get(hd); got != want {
			t.Errorf("%s %q, unthemed %q", hd, got, want)
		}
	}

	css := h.get("/f/" + f.ID() + "/theme.css?v=1-2563eb")
	if css.Code != 200 || css.Header().Get("Content-Type") != "text/css; charset=utf-8" || css.Header().Get("X-Content-Type-Options") != "nosniff" ||
		!strings.Contains(css.Header().Get("Cache-Control"), "immutable") {
		t.Fatalf("theme.css %d %v", css.Code, css.Header())
	}
	if b := body(css); !strings.Contains(b, "--fw-accent:#2563eb;") || !strings.Contains(b, "--fw-on-accent:#ffffff;") {
		t.Fatalf("theme.css %s", b)
	}
	if old := h.get("/f/" + f.ID() + "/theme.css?v=1-000000"); old.Code != 200 || strings.Contains(old.Header().Get("Cache-Control"), "immutable") {
		t.Fatalf("an older version is cached for good: %v", old.Header())
	}
	if none := h.get("/f/" + plain.ID() + "/theme.css"); none.Code != 404 {
		t.Fatalf("theme.css of a form without accent: %d", none.Code)
	}

	img := h.get("/f/" + f.ID() + "/logo/" + logo.Version)
	if img.Code != 200 || img.Header().Get("Content-Type") != "image/png" || img.Header().Get("X-Content-Type-Options") != "nosniff" ||
		!strings.Contains(img.Header().Get("Cache-Control"), "immutable") || !bytes.Equal(img.Body.Bytes(), image) {
		t.Fatalf("logo %d %v", img.Code, img.Header())
	}
	for _, path := range []string{"/f/" + f.ID() + "/logo/0000", "/f/" + plain.ID() + "/logo/" + logo.Version} {
		if r := h.get(path); r.Code != 404 {
			t.Errorf("%s: %d", path, r.Code)
		}
	}

	// A theme change shows at once although the page is cached.
	dark := "#60a5fa"
	s.Theme = form.Theme{Accent: &dark, Appearance: form.AppearanceDark}
	if _, err := h.app.Commands.UpdateForm.Handle(h.owner(context.Background()), forms.UpdateForm{ID: f.ID(), Patch: form.Patch{Settings: &s}}); err != nil {
		t.Fatal(err)
	}
	page = body(h.get("/f/" + f.ID()))
	if !strings.Contains(page, `class="theme-dark"`) || !strings.Contains(page, "theme.css?v=1-60a5fa") || !strings.Contains(page, logo.Version) {
		t.Fatalf("the new theme is not shown:\n%s", page)
	}
	if css := body(h.get("/f/" + f.ID() + "/theme.css?v=1-60a5fa")); !strings.Contains(css, "--fw-on-accent:#111111;") {
		t.Fatalf("dark text on a light accent: %s", css)
	}

	// The same image again changes nothing; another replaces it and its image is deleted.
	owner := h.owner(context.Background())
	if v, err := h.app.Commands.SetFormLogo.Handle(owner, forms.SetFormLogo{ID: f.ID(), Data: image}); err != nil || *v.Form.Settings().Theme.Logo != *logo {
		t.Fatalf("same image again: %v", err)
	}
	if r := h.get("/f/" + f.ID() + "/logo/" + logo.Version); r.Code != 200 {
		t.Fatalf("the logo uploaded again is not served: %d", r.Code)
	}
	v, err = h.app.Commands.SetFormLogo.Handle(owner, forms.SetFormLogo{ID: f.ID(), Data: pngOf(t, 5, 5)})
	if err != nil {
		t.Fatal(err)
	}
	old := logo
	logo = v.Form.Settings().Theme.Logo
	if logo.Version == old.Version || logo.Width != 5 {
		t.Fatalf("replaced logo %+v", logo)
	}
	if _, _, err := store.Get(context.Background(), old.Key); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("the replaced image is still stored: %v", err)
	}
	if r := h.get("/f/" + f.ID() + "/logo/" + old.Version); r.Code != 404 {
		t.Fatalf("the replaced logo is served: %d", r.Code)
	}

	// Removing the logo deletes the image.
	if _, err := h.app.Commands.RemoveFormLogo.Handle(h.owner(context.Background()), forms.RemoveFormLogo{ID: f.ID()}); err != nil {
		t.Fatal(err)
	}
	if r := h.get("/f/" + f.ID() + "/logo/" + logo.Version); r.Code != 404 {
		t.Fatalf("removed logo served: %d", r.Code)
	}
	if _, _, err := store.Get(context.Background(), logo.Key); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("the removed image is still stored: %v", err)
	}
	if strings.Contains(body(h.get("/f/"+f.ID())), `class="logo"`) {
		t.Fatal("removed logo still on the page")
	}

	// The closed page wears the theme too.
	archived := string(form.StatusArchived)
	if _, err := h.app.Commands.UpdateForm.Handle(owner, forms.UpdateForm{ID: f.ID(), Patch: form.Patch{Status: &archived}}); err != nil {
		t.Fatal(err)
	}
	closed := h.get("/f/" + f.ID())
	if p := body(closed); !strings.Contains(p, "This form is closed") || !strings.Contains(p, `<html lang="en" class="theme-dark">`) || !strings.Contains(p, "theme.css?v=1-60a5fa") {
		t.Fatalf("closed page without the theme:\n%s", p)
	}
	if got, want := closed.Header().Get("Content-Security-Policy"), plainRec.Header().Get("Content-Security-Policy"); got != want {
		t.Errorf("closed page CSP %q, want %q", got, want)
	}
}
