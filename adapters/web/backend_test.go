package web_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/formward/formward/domain/form"
)

const site = "http://127.0.0.2:8081"

// backendForm is a published form with the default spam rules (render token, fill time,
// honeypot) that allows posts from site.
func backendForm(h *harness, mod ...func(*form.Settings)) *form.Form {
	s := form.DefaultSettings()
	s.AllowedOrigins = origins(h.t, site)
	for _, m := range mod {
		m(&s)
	}
	return h.form(form.StatusPublished, &s, form.FieldSpec{Label: "Name", Type: "text", Required: true}, form.FieldSpec{Label: "Email", Type: "email"})
}

func TestFormBackendAcceptsAllowedOriginsWithoutToken(t *testing.T) {
	for _, kind := range []string{"urlencoded", "multipart"} {
		t.Run(kind, func(t *testing.T) {
			h := newHarness(t, noRateLimit)
			f := backendForm(h)
			name, mail := f.Fields()[0].ID, f.Fields()[1].ID

			// From the allowed site, no token, posted at once: stored.
			rec := h.postAs(f, kind, map[string]string{name: "Ada", mail: "ada@example.com",
				"_replyto": "ada@example.com", "_subject": "New signup"}, "Origin", site)
			if rec.Code != 200 || !strings.Contains(rec.Body.String(), "Thank you") {
				t.Fatalf("allowed origin: %d %s", rec.Code, rec.Body.String())
			}
			if got := rec.Header().Get("Access-Control-Allow-Origin"); got != site {
				t.Fatalf("CORS header %q", got)
			}
			subs := h.submissions(f)
			if len(subs) != 1 {
				t.Fatalf("%d stored", len(subs))
			}
			m := subs[0].Metadata()
			if m.ReplyTo == nil || *m.ReplyTo != "ada@example.com" || m.Subject == nil || *m.Subject != "New signup" || m.Source != "form" {
				t.Fatalf("metadata %+v", m)
			}

			// Lacking an Origin, the Referer's origin counts.
			if rec := h.postAs(f, kind, map[string]string{name: "Bob"}, "Referer", site+"/contact.html?x=1"); rec.Code != 200 {
				t.Fatalf("referer fallback: %d %s", rec.Code, rec.Body.String())
			}
			// Another site: 403, nothing stored; also by Referer.
			for _, hdr := range [][]string{{"Origin", "https://evil.example"}, {"Referer", "https://evil.example/x"}, {"Origin", "http://127.0.0.2:9999"}} {
				if rec := h.postAs(f, kind, map[string]string{name: "Eve"}, hdr...); rec.Code != 403 {
					t.Fatalf("%v: %d", hdr, rec.Code)
				}
			}
			if h.spam(f, "origin_not_allowed") != 3 {
				t.Fatalf("origin refusals counted %v", h.spam(f, "origin_not_allowed"))
			}
			// The hosted page's own posts still need their token (same host, no token).
			if rec := h.postAs(f, kind, map[string]string{name: "Tok"}, "Origin", "http://example.com"); rec.Code != 403 {
				t.Fatalf("same-site post without token: %d", rec.Code)
			}
			// Behind a proxy that rewrites Host, X-Forwarded-Host names this server's page.
			if rec := h.postAs(f, kind, map[string]string{name: "Tok"}, "Origin", "https://forms.example", "X-Forwarded-Host", "forms.example"); rec.Code != 403 || h.spam(f, "token_missing") != 2 {
				t.Fatalf("own page behind a proxy without token: %d", rec.Code)
			}
			if n := len(h.submissions(f)); n != 2 {
				t.Fatalf("%d stored", n)
			}
		})
	}
}

func TestFormBackendSpecialFields(t *testing.T) {
	h := newHarness(t, noRateLimit)
	f := backendForm(h)
	name := f.Fields()[0].ID

	// _gotcha is a honeypot: a thank-you, nothing stored.
	rec := h.postAs(f, "urlencoded", map[string]string{name: "Bot", "_gotcha": "http://spam.example"}, "Origin", site)
	if rec.Code != 200 || len(h.submissions(f)) != 0 || h.spam(f, "honeypot") != 1 {
		t.Fatalf("_gotcha: %d, %d stored", rec.Code, len(h.submissions(f)))
	}
	// _next on the allowed site: 303 there.
	rec = h.postAs(f, "urlencoded", map[string]string{name: "Ada", "_next": site + "/thanks.html?from=form"}, "Origin", site)
	if rec.Code != 303 || rec.Header().Get("Location") != site+"/thanks.html?from=form" {
		t.Fatalf("_next: %d %q", rec.Code, rec.Header().Get("Location"))
	}
	// _next elsewhere is ignored: the thank-you page.
	for _, next := range []string{"https://evil.example/phish", "javascript:alert(1)", "//evil.example/"} {
		rec = h.postAs(f, "urlencoded", map[string]string{name: "Ada", "_next": next}, "Origin", site)
		if rec.Code != 200 || rec.Header().Get("Location") != "" {
			t.Fatalf("_next %q: %d %q", next, rec.Code, rec.Header().Get("Location"))
		}
	}
	// Accept: application/json gets JSON, success and errors alike.
	rec = h.postAs(f, "multipart", map[string]string{name: "Ada", "_next": site + "/x"}, "Origin", site, "Accept", "application/json")
	if rec.Code != 201 || !strings.Contains(rec.Body.String(), `"ok":true`) || !strings.Contains(rec.Body.String(), `"id":"sub_`) {
		t.Fatalf("JSON answer: %d %s", rec.Code, rec.Body.String())
	}
	rec = h.postAs(f, "urlencoded", map[string]string{"_replyto": "not an address"}, "Origin", site, "Accept", "application/json")
	code, details := errorCode(t, rec)
	if rec.Code != 422 || code != "validation_failed" || !hasDetail(details, name, "required") || !hasDetail(details, "_replyto", "invalid_value") {
		t.Fatalf("JSON error: %d %s", rec.Code, rec.Body.String())
	}
	rec = h.postAs(f, "urlencoded", map[string]string{name: "Eve"}, "Origin", "https://evil.example", "Accept", "application/json")
	if code, _ := errorCode(t, rec); rec.Code != 403 || code != "rejected" {
		t.Fatalf("JSON refusal: %d %s", rec.Code, rec.Body.String())
	}
	// _subject is bounded.
	rec = h.postAs(f, "urlencoded", map[string]string{name: "Ada", "_subject": strings.Repeat("s", 201)}, "Origin", site)
	if rec.Code != 422 {
		t.Fatalf("long _subject: %d", rec.Code)
	}
}

func hasDetail(details []map[string]string, field, code string) bool {
	for _, d := range details {
		if d["field"] == field && d["code"] == code {
			return true
		}
	}
	return false
}

func TestFormBackendSkipsOnlyTheHostedPageRules(t *testing.T) {
	h := newHarness(t, noRateLimit)
	// Proof of work needs the hosted page: a form-backend post skips it...
	f := backendForm(h, func(s *form.Settings) { s.Spam.ProofOfWork = true })
	name := f.Fields()[0].ID
	if rec := h.postAs(f, "urlencoded", map[string]string{name: "Ada"}, "Origin", site); rec.Code != 200 {
		t.Fatalf("pow form from the allowed site: %d %s", rec.Code, rec.Body.String())
	}
	// ...but not the captcha, which the owner's page can carry.
	c := backendForm(h, func(s *form.Settings) {
		s.Spam.Captcha = &form.Captcha{Provider: form.CaptchaTurnstile, SiteKey: "site", Secret: "secret"}
	})
	if rec := h.postAs(c, "urlencoded", map[string]string{c.Fields()[0].ID: "Ada"}, "Origin", site); rec.Code != 403 {
		t.Fatalf("captcha form without a captcha answer: %d", rec.Code)
	}
	// Without allowed_origins a post from another site is what it was: a post without its token.
	plain := h.form(form.StatusPublished, nil, form.FieldSpec{Label: "Name", Type: "text"})
	if rec := h.postAs(plain, "urlencoded", map[string]string{plain.Fields()[0].ID: "Ada"}, "Origin", site); rec.Code != 403 || len(h.submissions(plain)) != 0 {
		t.Fatalf("no allowed origins: %d", rec.Code)
	}
	// The rate limit still applies.
	h2 := newHarness(t)
	g := backendForm(h2)
	var last *httptest.ResponseRecorder
	for range 11 {
		last = h2.postAs(g, "urlencoded", map[string]string{g.Fields()[0].ID: "Ada"}, "Origin", site)
	}
	if last.Code != 429 {
		t.Fatalf("11th post in a minute: %d", last.Code)
	}
}

func TestFormBackendPreflight(t *testing.T) {
	h := newHarness(t)
	f := backendForm(h)
	req := httptest.NewRequest("OPTIONS", "/f/"+f.ID(), nil)
	req.Header.Set("Origin", site)
	req.Header.Set("Access-Control-Request-Method", "POST")
	rec := h.do(req)
	if rec.Code != 204 || rec.Header().Get("Access-Control-Allow-Origin") != site {
		t.Fatalf("preflight: %d %v", rec.Code, rec.Header())
	}
	req.Header.Set("Origin", "https://evil.example")
	if rec := h.do(req); rec.Code != 403 {
		t.Fatalf("preflight from elsewhere: %d", rec.Code)
	}
}

// A plain HTML form names its inputs by field key (name="email"), as form backends expect;
// field IDs keep working.
func TestFormBackendNamesFieldsByKey(t *testing.T) {
	for _, kind := range []string{"urlencoded", "multipart"} {
		t.Run(kind, func(t *testing.T) {
			h := newHarness(t, noRateLimit)
			f := backendForm(h)
			name, mail := f.Fields()[0], f.Fields()[1]
			if name.Key != "name" || mail.Key != "email" {
				t.Fatalf("keys %q, %q", name.Key, mail.Key)
			}
			rec := h.postAs(f, kind, map[string]string{"name": "Ada", "email": "ada@example.com"}, "Origin", site)
			if rec.Code != 200 {
				t.Fatalf("post by keys: %d %s", rec.Code, rec.Body.String())
			}
			subs := h.submissions(f)
			if len(subs) != 1 || subs[0].Data()[name.ID].String() != "Ada" || subs[0].Data()[mail.ID].String() != "ada@example.com" {
				t.Fatalf("stored %d, data %v", len(subs), subs[0].Data())
			}
		})
	}
}
