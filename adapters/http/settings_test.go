package httpapi_test

import (
	"strings"
	"testing"
)

func TestFormSettings(t *testing.T) {
	eachHarness(t, func(t *testing.T, h *harness) {
		key := h.keys["admin"]

		// Defaults: every spam rule a respondent without JavaScript passes, no framing.
		r := h.do("POST", "/v1/forms", key, map[string]any{"name": "Contact"})
		h.expect(r, 201, "")
		s := r.json["settings"].(map[string]any)
		spam := s["spam"].(map[string]any)
		if spam["honeypot"] != true || spam["min_fill_seconds"] != float64(3) || spam["proof_of_work"] != false || spam["captcha"] != nil || s["redirect_url"] != nil {
			t.Fatalf("defaults %v", s)
		}

		settings := map[string]any{
			"redirect_url": "https://owner.example/thanks", "thank_you_message": "Merci",
			"spam": map[string]any{"honeypot": false, "min_fill_seconds": 0, "proof_of_work": false,
				"captcha": map[string]any{"provider": "turnstile", "site_key": "0x4AAA", "secret": "very-secret"}},
			"embed": map[string]any{"frame_ancestors": []string{"https://owner.example"}, "cors_origins": []string{"https://owner.example"}},
		}
		r = h.do("POST", "/v1/forms", key, map[string]any{"name": "Embedded", "settings": settings})
		h.expect(r, 201, "")
		if strings.Contains(r.Body.String(), "very-secret") {
			t.Fatal("captcha secret shown")
		}
		id := r.json["id"].(string)
		r = h.do("GET", "/v1/forms/"+id, key, nil)
		h.expect(r, 200, "")
		s = r.json["settings"].(map[string]any)
		c := s["spam"].(map[string]any)["captcha"].(map[string]any)
		if s["redirect_url"] != "https://owner.example/thanks" || s["thank_you_message"] != "Merci" || c["secret_set"] != true || c["provider"] != "turnstile" {
			t.Fatalf("read back %v", s)
		}
		if strings.Contains(r.Body.String(), "very-secret") {
			t.Fatal("captcha secret shown")
		}

		// PATCH replaces settings; a captcha without secret keeps the stored one.
		r = h.do("PATCH", "/v1/forms/"+id, key, map[string]any{"settings": map[string]any{
			"spam": map[string]any{"captcha": map[string]any{"provider": "turnstile", "site_key": "0x4BBB"}}}})
		h.expect(r, 200, "")
		s = r.json["settings"].(map[string]any)
		c = s["spam"].(map[string]any)["captcha"].(map[string]any)
		if c["secret_set"] != true || c["site_key"] != "0x4BBB" || s["redirect_url"] != nil || s["spam"].(map[string]any)["proof_of_work"] != false {
			t.Fatalf("patched %v", s)
		}

		r = h.do("PATCH", "/v1/forms/"+id, key, map[string]any{"settings": map[string]any{
			"redirect_url": "http://plain.example", "spam": map[string]any{"min_fill_seconds": -1, "captcha": map[string]any{"provider": "nope", "site_key": "x", "secret": "y"}},
			"embed": map[string]any{"frame_ancestors": []string{"https://a.example/path"}}}})
		h.expect(r, 422, "validation_failed")
		fields := map[string]bool{}
		for _, d := range r.json["error"].(map[string]any)["details"].([]any) {
			fields[d.(map[string]any)["field"].(string)] = true
		}
		for _, want := range []string{"settings.redirect_url", "settings.spam.min_fill_seconds", "settings.spam.captcha.provider", "settings.embed.frame_ancestors[0]"} {
			if !fields[want] {
				t.Errorf("no violation for %s in %v", want, fields)
			}
		}
		r = h.do("PATCH", "/v1/forms/"+id, key, map[string]any{"settings": map[string]any{"extra": 1}})
		h.expect(r, 422, "validation_failed")
		if !strings.Contains(r.Body.String(), "settings.extra") {
			t.Errorf("unknown property not reported: %s", r.Body.String())
		}

		// Origins: one parser (domain/origin) for allowed_origins, CORS and framing. IPv6
		// literals are kept in canonical form, wildcards refused everywhere; a captcha sent
		// without its secret (kept from storage) is no problem next to a refused origin.
		r = h.do("PATCH", "/v1/forms/"+id, key, map[string]any{"settings": map[string]any{
			"allowed_origins": []string{"HTTP://[0:0::1]:8080"},
			"embed":           map[string]any{"frame_ancestors": []string{"https://[2001:DB8::1]:443"}, "cors_origins": []string{"http://[::1]:8081"}}}})
		h.expect(r, 200, "")
		s = r.json["settings"].(map[string]any)
		em := s["embed"].(map[string]any)
		if got := s["allowed_origins"].([]any); len(got) != 1 || got[0] != "http://[::1]:8080" ||
			em["frame_ancestors"].([]any)[0] != "https://[2001:db8::1]" || em["cors_origins"].([]any)[0] != "http://[::1]:8081" {
			t.Fatalf("origins read back %v", s)
		}
		r = h.do("PATCH", "/v1/forms/"+id, key, map[string]any{"settings": map[string]any{
			"allowed_origins": []string{"https://*.example.com"}, "spam": map[string]any{"min_fill_seconds": -1,
				"captcha": map[string]any{"provider": "turnstile", "site_key": "0x4BBB"}},
			"embed": map[string]any{"frame_ancestors": []string{"https://ok.example", "https://*.example.org"}, "cors_origins": []string{"*"}}}})
		h.expect(r, 422, "validation_failed")
		fields = map[string]bool{}
		for _, d := range r.json["error"].(map[string]any)["details"].([]any) {
			fields[d.(map[string]any)["field"].(string)] = true
		}
		want := map[string]bool{"settings.allowed_origins[0]": true, "settings.embed.frame_ancestors[1]": true,
			"settings.embed.cors_origins[0]": true, "settings.spam.min_fill_seconds": true}
		if len(fields) != len(want) {
			t.Errorf("violations %v, want %v", fields, want)
		}
		for f := range want {
			if !fields[f] {
				t.Errorf("no violation for %s in %v", f, fields)
			}
		}
	})
}
