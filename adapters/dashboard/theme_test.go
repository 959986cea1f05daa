package dashboard_test

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/formward/formward/adapters/dashboard"
	"github.com/formward/formward/adapters/objectstore"
	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	"github.com/formward/formward/application"
	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/application/capture"
	"github.com/formward/formward/domain/form"
)

// upload posts one file as the multipart field "logo".
func (b *browser) upload(path, name string, data []byte) page {
	b.h.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	w, err := mw.CreateFormFile("logo", name)
	if err != nil {
		b.h.t.Fatal(err)
	}
	w.Write(data)
	mw.Close()
	req, err := http.NewRequest(http.MethodPost, b.h.server.URL+path, &body)
	if err != nil {
		b.h.t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := b.client.Do(req)
	if err != nil {
		b.h.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return page{Response: resp, body: string(raw)}
}

func themeOf(t *testing.T, h *harness, id string) form.Theme {
	t.Helper()
	f, err := h.app.Queries.GetPublicForm.Handle(auth.WithPrincipal(context.Background(), auth.SystemPrincipal("")), capture.GetPublicForm{ID: id})
	if err != nil {
		t.Fatal(err)
	}
	return f.Settings().Theme
}

var accentError = regexp.MustCompile(`id="s-accent-error">([^<]*)</span>`)
var logoError = regexp.MustCompile(`id="s-logo-error">([^<]*)</span>`)

func TestFormThemeSettings(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		dir := t.TempDir()
		h := newHarnessWith(t, db, "http://127.0.0.1:8080", httptest.NewUnstartedServer(nil), func(d *application.Deps, _ *dashboard.Options) {
			store, err := objectstore.NewLocal(filepath.Join(dir, "files"))
			if err != nil {
				t.Fatal(err)
			}
			d.Files = store
		})
		b := h.owner()
		id := createForm(t, b, "Themed")
		path := "/app/forms/" + id + "/settings"
		base := url.Values{"name": {"Themed survey"}, "thank_you_message": {"Merci"}, "min_fill_seconds": {"3"}, "honeypot": {"1"}}
		with := func(accent, appearance string) url.Values {
			v := url.Values{}
			for k, vs := range base {
				v[k] = vs
			}
			v.Set("accent", accent)
			v.Set("appearance", appearance)
			return v
		}

		// A contrast-failing accent: the message on the accent, everything typed kept, nothing saved.
		p := b.post(path, with("#FFEE00", "light")).expect(t, http.StatusUnprocessableEntity)
		m := accentError.FindStringSubmatch(p.body)
		if m == nil || !strings.Contains(m[1], "The accent #ffee00 gives a contrast of 1.1:1 with the light page background; it needs 3:1") {
			t.Fatalf("no contrast message on the accent: %v\n%s", m, text(p.body))
		}
		for _, kept := range []string{`value="Themed survey"`, `>Merci</textarea>`, `value="#FFEE00"`, `id="s-appearance-light" name="appearance" type="radio" value="light" checked`} {
			if !strings.Contains(p.body, kept) {
				t.Errorf("the redrawn settings lack %s", kept)
			}
		}
		if th := themeOf(t, h, id); th.Accent != nil {
			t.Fatalf("a refused accent was saved: %+v", th)
		}
		p = b.post(path, with("#1d4ed8", "auto")).expect(t, http.StatusUnprocessableEntity)
		if m := accentError.FindStringSubmatch(p.body); m == nil || !strings.Contains(m[1], "with the dark page background") {
			t.Fatalf("auto does not check the dark background: %v", m)
		}
		p = b.post(path, with("#2563EB", "sepia")).expect(t, http.StatusUnprocessableEntity)
		if !regexp.MustCompile(`id="s-appearance-error">The appearance must be one of light, dark, auto`).MatchString(p.body) &&
			!strings.Contains(p.body, `id="s-appearance-error">Appearance must be one of light, dark, auto`) {
			t.Fatalf("no message on the appearance: %s", text(p.body))
		}

		b.post(path, with("#2563EB", "auto")).redirectsTo(t, "/app/forms/"+id)
		if th := themeOf(t, h, id); th.Accent == nil || *th.Accent != "#2563eb" || th.Appearance != form.AppearanceAuto {
			t.Fatalf("saved theme %+v", th)
		}
		page := b.get("/app/forms/"+id+"?tab=settings").expect(t, http.StatusOK).body
		if !strings.Contains(page, `id="s-accent" name="accent" type="text" value="#2563eb"`) || !strings.Contains(page, `value="auto" checked`) {
			t.Fatalf("the builder does not show the theme: %s", text(page))
		}

		// The logo: a PNG is accepted and shown.
		var img bytes.Buffer
		if err := png.Encode(&img, image.NewRGBA(image.Rect(0, 0, 4, 3))); err != nil {
			t.Fatal(err)
		}
		logoPath := "/app/forms/" + id + "/logo"
		b.upload(logoPath, "logo.png", img.Bytes()).redirectsTo(t, "/app/forms/"+id)
		logo := themeOf(t, h, id).Logo
		if logo == nil || logo.ContentType != "image/png" || logo.Width != 4 || logo.Height != 3 {
			t.Fatalf("logo %+v", logo)
		}
		page = b.get("/app/forms/"+id+"?tab=settings").expect(t, http.StatusOK).body
		if !strings.Contains(page, `<img class="fb-logo" src="/f/`+id+`/logo/`+logo.Version+`" alt="Current logo" width="4" height="3">`) {
			t.Fatalf("the builder does not show the logo: %s", text(page))
		}
		// Saving the other settings keeps the logo.
		b.post(path, with("#2563eb", "auto")).redirectsTo(t, "/app/forms/"+id)
		if l := themeOf(t, h, id).Logo; l == nil || *l != *logo {
			t.Fatalf("settings save dropped the logo: %+v", l)
		}

		// Refused files: a message on the logo input, the stored logo unchanged.
		pngHead := []byte("\x89PNG\r\n\x1a\n")
		for _, tc := range []struct {
			name   string
			data   []byte
			status int
			want   string
		}{
			{"notes.png", []byte("just some text, not an image at all"), http.StatusUnprocessableEntity, "must be a PNG, JPEG, WebP or GIF image"},
			{"logo.svg", []byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`), http.StatusUnprocessableEntity, "SVG is not accepted"},
			{"big.png", append(append([]byte{}, pngHead...), make([]byte, 520<<10)...), http.StatusUnprocessableEntity, "it must be at most 512 KB"},
			{"huge.png", append(append([]byte{}, pngHead...), make([]byte, 2<<20)...), http.StatusRequestEntityTooLarge, "larger than 512 KB"},
			{"broken.png", append(append([]byte{}, pngHead...), []byte("not really")...), http.StatusUnprocessableEntity, "could not be read as an image"},
		} {
			p := b.upload(logoPath, tc.name, tc.data)
			if p.StatusCode != tc.status {
				t.Errorf("%s: status %d, want %d", tc.name, p.StatusCode, tc.status)
			}
			if m := logoError.FindStringSubmatch(p.body); m == nil || !strings.Contains(m[1], tc.want) {
				t.Errorf("%s: message %v, want %q", tc.name, m, tc.want)
			}
			if !strings.Contains(p.body, `value="#2563eb"`) {
				t.Errorf("%s: the settings are not shown as saved", tc.name)
			}
			if l := themeOf(t, h, id).Logo; l == nil || *l != *logo {
				t.Fatalf("%s changed the logo: %+v", tc.name, l)
			}
		}

		// Removing the logo.
		b.post(logoPath+"/remove", url.Values{}).redirectsTo(t, "/app/forms/"+id)
		if l := themeOf(t, h, id).Logo; l != nil {
			t.Fatalf("logo after removal %+v", l)
		}
		if strings.Contains(b.get("/app/forms/"+id+"?tab=settings").body, `class="fb-logo"`) {
			t.Fatal("the builder still shows the removed logo")
		}
	})
}
