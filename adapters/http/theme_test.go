package httpapi_test

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	httpapi "github.com/formward/formward/adapters/http"
	"github.com/formward/formward/adapters/objectstore"
	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	"github.com/formward/formward/application"
	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/application/forms"
)

func TestFormTheme(t *testing.T) {
	eachHarness(t, func(t *testing.T, h *harness) {
		key := h.keys["admin"]
		r := h.do("POST", "/v1/forms", key, map[string]any{"name": "Plain"})
		h.expect(r, 201, "")
		th := r.json["settings"].(map[string]any)["theme"].(map[string]any)
		if th["accent"] != nil || th["appearance"] != "light" || th["logo"] != nil {
			t.Fatalf("default theme %v", th)
		}
		id := r.json["id"].(string)

		r = h.do("PATCH", "/v1/forms/"+id, key, map[string]any{"settings": map[string]any{
			"theme": map[string]any{"accent": "#2563EB", "appearance": "auto", "logo": map[string]any{"url": "/elsewhere"}}}})
		h.expect(r, 200, "")
		th = r.json["settings"].(map[string]any)["theme"].(map[string]any)
		if th["accent"] != "#2563eb" || th["appearance"] != "auto" || th["logo"] != nil {
			t.Fatalf("patched theme %v", th)
		}
		updated := r.json["updated_at"]

		for _, tc := range []struct {
			theme   map[string]any
			field   string
			message string
		}{
			{map[string]any{"accent": "#ffee00", "appearance": "light"}, "settings.theme.accent", "The accent #ffee00 gives a contrast of 1.1:1 with the light page background; it needs 3:1"},
			{map[string]any{"accent": "#1d4ed8", "appearance": "auto"}, "settings.theme.accent", "with the dark page background"},
			{map[string]any{"accent": "blue"}, "settings.theme.accent", "#rrggbb"},
			{map[string]any{"appearance": "sepia"}, "settings.theme.appearance", "light, dark, auto"},
			{map[string]any{"appearance": ""}, "settings.theme.appearance", "light, dark, auto"},
			{map[string]any{"accent": 12}, "settings.theme.accent", ""},
		} {
			r = h.do("PATCH", "/v1/forms/"+id, key, map[string]any{"settings": map[string]any{"theme": tc.theme}})
			h.expect(r, 422, "validation_failed")
			found := false
			for _, d := range r.json["error"].(map[string]any)["details"].([]any) {
				dm := d.(map[string]any)
				found = found || dm["field"] == tc.field && strings.Contains(dm["message"].(string), tc.message)
			}
			if !found {
				t.Errorf("%v: no violation on %s with %q: %s", tc.theme, tc.field, tc.message, r.Body.String())
			}
		}
		r = h.do("GET", "/v1/forms/"+id, key, nil)
		h.expect(r, 200, "")
		th = r.json["settings"].(map[string]any)["theme"].(map[string]any)
		if th["accent"] != "#2563eb" || th["appearance"] != "auto" || r.json["updated_at"] != updated {
			t.Fatalf("a refused theme changed the form: %v", r.json)
		}
	})
}

// The logo is read-only in the API: its path and size are shown, a PATCH of the settings keeps
// it, and a logo sent in the settings is ignored.
func TestFormThemeLogoReadOnly(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		store, err := objectstore.NewLocal(filepath.Join(t.TempDir(), "files"))
		if err != nil {
			t.Fatal(err)
		}
		h := newHarness(t, db, httpapi.Options{}, func(d *application.Deps) { d.Files = store })
		key := h.keys["admin"]
		r := h.do("POST", "/v1/forms", key, map[string]any{"name": "Logo"})
		h.expect(r, 201, "")
		id := r.json["id"].(string)
		var img bytes.Buffer
		if err := png.Encode(&img, image.NewRGBA(image.Rect(0, 0, 6, 2))); err != nil {
			t.Fatal(err)
		}
		v, err := h.app.Commands.SetFormLogo.Handle(auth.WithPrincipal(context.Background(), auth.SystemPrincipal(h.wsA)), forms.SetFormLogo{ID: id, Data: img.Bytes()})
		if err != nil {
			t.Fatal(err)
		}
		version := v.Form.Settings().Theme.Logo.Version
		want := map[string]any{"url": "/f/" + id + "/logo/" + version, "content_type": "image/png", "size": float64(img.Len()), "width": float64(6), "height": float64(2)}
		r = h.do("PATCH", "/v1/forms/"+id, key, map[string]any{"settings": map[string]any{"theme": map[string]any{"appearance": "dark", "logo": nil}}})
		h.expect(r, 200, "")
		th := r.json["settings"].(map[string]any)["theme"].(map[string]any)
		if !reflect.DeepEqual(th["logo"], want) || th["appearance"] != "dark" {
			t.Fatalf("theme after PATCH %v, want logo %v", th, want)
		}
		r = h.do("PATCH", "/v1/forms/"+id, key, map[string]any{"settings": map[string]any{}})
		h.expect(r, 200, "")
		if th := r.json["settings"].(map[string]any)["theme"].(map[string]any); !reflect.DeepEqual(th["logo"], want) || th["appearance"] != "light" {
			t.Fatalf("theme after PATCH without theme %v", th)
		}
	})
}
