package httpapi_test

import (
	"strings"
	"testing"
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
