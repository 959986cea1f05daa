package form_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/form"
)

// TestTextRules: every text of a form (name, description, label, option, placeholder, help,
// thank-you message, captcha keys) refuses control characters at its JSON path, on New and Apply.
func TestTextRules(t *testing.T) {
	nul := "a\x00b"
	cases := []struct {
		name  string
		draft form.Draft
		path  string
	}{
		{"name", form.Draft{Name: nul}, "name"},
		{"name C1", form.Draft{Name: "x\u0085y"}, "name"},
		{"name invalid UTF-8", form.Draft{Name: "x\xff"}, "name"},
		{"description", form.Draft{Name: "F", Description: ptr("d\x1b")}, "description"},
		{"label", form.Draft{Name: "F", Fields: []form.FieldSpec{{Label: nul, Type: "text"}}}, "fields[0].label"},
		{"option", form.Draft{Name: "F", Fields: []form.FieldSpec{{Label: "L", Type: "radio", Options: []string{"ok", nul}}}}, "fields[0].options[1]"},
		{"placeholder", form.Draft{Name: "F", Fields: []form.FieldSpec{{Label: "L", Type: "text", Placeholder: ptr(nul)}}}, "fields[0].placeholder"},
		{"help", form.Draft{Name: "F", Fields: []form.FieldSpec{{Label: "L", Type: "text"}, {Label: "M", Type: "text", Help: ptr("x\x07y")}}}, "fields[1].help"},
		{"thank you", form.Draft{Name: "F", Settings: &form.Settings{ThankYouMessage: ptr(nul)}}, "settings.thank_you_message"},
		{"captcha site key", form.Draft{Name: "F", Settings: &form.Settings{Spam: form.Spam{Captcha: &form.Captcha{Provider: form.CaptchaTurnstile, SiteKey: nul, Secret: "s"}}}}, "settings.spam.captcha.site_key"},
		{"captcha secret", form.Draft{Name: "F", Settings: &form.Settings{Spam: form.Spam{Captcha: &form.Captcha{Provider: form.CaptchaTurnstile, SiteKey: "k", Secret: nul}}}}, "settings.spam.captcha.secret"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ids, _ := seqIDs()
			_, err := form.New("frm_1", "wsp_1", c.draft, ids, form.DefaultLimits, t0)
			if vs := violations(t, err); !hasViolation(vs, c.path, "invalid_value") {
				t.Fatalf("violations %v, want invalid_value at %s", vs, c.path)
			}
		})
	}
	f, ids := newForm(t, form.FieldSpec{Label: "Name", Type: "text"})
	for _, p := range []struct {
		patch form.Patch
		path  string
	}{
		{form.Patch{Name: ptr(nul)}, "name"},
		{form.Patch{Description: ptr(ptr(nul))}, "description"},
		{form.Patch{Fields: &[]form.FieldSpec{{ID: "fld_1", Label: nul, Type: "text"}}}, "fields[0].label"},
		{form.Patch{Fields: &[]form.FieldSpec{{ID: "fld_1", Label: "Name", Type: "text", Help: ptr(nul)}}}, "fields[0].help"},
		{form.Patch{Settings: &form.Settings{ThankYouMessage: ptr(nul)}}, "settings.thank_you_message"},
	} {
		if _, err := f.Apply(p.patch, ids, form.DefaultLimits, t1); !hasViolation(violations(t, err), p.path, "invalid_value") {
			t.Fatalf("Apply: %v, want invalid_value at %s", err, p.path)
		}
	}
	if f.Name() != "Contact" || f.Description() != nil || f.Fields()[0].Label != "Name" {
		t.Fatal("a refused patch changed the form")
	}
	// Tab, line feed and carriage return are allowed.
	if _, err := f.Apply(form.Patch{Description: ptr(ptr("one\ttwo\r\nthree"))}, ids, form.DefaultLimits, t1); err != nil {
		t.Fatalf("tab and newlines refused: %v", err)
	}
}

// TestLengthCaps: label, option and placeholder at most 500 characters; help at most 1,000;
// description and thank-you message at most 5,000; counted in characters, not bytes.
func TestLengthCaps(t *testing.T) {
	long := func(n int) string { return strings.Repeat("é", n) }
	field := func(mod func(*form.FieldSpec)) form.Draft {
		s := form.FieldSpec{Label: "L", Type: "checkbox", Options: []string{"a"}}
		mod(&s)
		return form.Draft{Name: "F", Fields: []form.FieldSpec{s}}
	}
	for _, c := range []struct {
		name        string
		ok, tooLong form.Draft
		path        string
	}{
		{"label", field(func(s *form.FieldSpec) { s.Label = long(500) }), field(func(s *form.FieldSpec) { s.Label = long(501) }), "fields[0].label"},
		{"option", field(func(s *form.FieldSpec) { s.Options = []string{long(500)} }), field(func(s *form.FieldSpec) { s.Options = []string{"a", long(501)} }), "fields[0].options[1]"},
		{"placeholder", field(func(s *form.FieldSpec) { s.Placeholder = ptr(long(500)) }), field(func(s *form.FieldSpec) { s.Placeholder = ptr(long(501)) }), "fields[0].placeholder"},
		{"help", field(func(s *form.FieldSpec) { s.Help = ptr(long(1000)) }), field(func(s *form.FieldSpec) { s.Help = ptr(long(1001)) }), "fields[0].help"},
		{"description", form.Draft{Name: "F", Description: ptr(long(5000))}, form.Draft{Name: "F", Description: ptr(long(5001))}, "description"},
		{"thank you", form.Draft{Name: "F", Settings: &form.Settings{ThankYouMessage: ptr(long(5000))}}, form.Draft{Name: "F", Settings: &form.Settings{ThankYouMessage: ptr(long(5001))}}, "settings.thank_you_message"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ids, _ := seqIDs()
			if _, err := form.New("frm_1", "wsp_1", c.ok, ids, form.DefaultLimits, t0); err != nil {
				t.Fatalf("at the cap: %v", err)
			}
			_, err := form.New("frm_1", "wsp_1", c.tooLong, ids, form.DefaultLimits, t0)
			if vs := violations(t, err); !hasViolation(vs, c.path, "too_long") {
				t.Fatalf("violations %v, want too_long at %s", vs, c.path)
			}
		})
	}
	f, ids := newForm(t)
	if _, err := f.Apply(form.Patch{Description: ptr(ptr(long(5001)))}, ids, form.DefaultLimits, t1); !hasViolation(violations(t, err), "description", "too_long") {
		t.Fatalf("Apply accepted a long description: %v", err)
	}
}

func TestParseRedirectURL(t *testing.T) {
	for _, c := range []struct{ in, url, origin string }{
		{"https://owner.example/thanks", "https://owner.example/thanks", "https://owner.example"},
		{"HTTPS://Owner.Example:443/Thanks?a=1&b=2#top", "https://owner.example/Thanks?a=1&b=2#top", "https://owner.example"},
		{"https://owner.example:8443", "https://owner.example:8443", "https://owner.example:8443"},
		{"https://[2001:DB8::1]/x", "https://[2001:db8::1]/x", "https://[2001:db8::1]"},
		{"https://xn--bcher-kva.example/%C3%BC", "https://xn--bcher-kva.example/%C3%BC", "https://xn--bcher-kva.example"},
	} {
		got, err := form.ParseRedirectURL(c.in)
		if err != nil || got.URL != c.url || got.Origin.String() != c.origin {
			t.Errorf("ParseRedirectURL(%q) = %+v, %v; want %s, %s", c.in, got, err, c.url, c.origin)
		}
	}
	for _, in := range []string{
		"https://a.example;sandbox;report-uri/",
		"https://a.example/;sandbox",
		"https://a.example/x,y",
		"https://a.example/ x",
		"https://a.example/\tx",
		"https://a.example/\x00",
		"https://a.example/\u0085",
		"https://a.example/'self'",
		`https://a.example/"x`,
		`https://a.example\@evil.example/`,
		"https://a.example/<x>",
		"http://a.example/thanks",
		"javascript:alert(1)",
		"//a.example/x",
		"/thanks",
		"https:///x",
		"https://user:pw@a.example/",
		"https://a.example:99999/",
		"https://a.example:/",
		"https://bücher.example/",
		"https://*.example/",
		"https://a.example/" + strings.Repeat("x", 2000),
		"",
	} {
		if got, err := form.ParseRedirectURL(in); err == nil {
			t.Errorf("ParseRedirectURL(%q) accepted: %+v", in, got)
		}
	}
}

// TestParseOrigins: a settings list of origins is read by origin.Parse, one violation per
// entry that is not an origin (paths, wildcards, keywords, anything a CSP could misread).
func TestParseOrigins(t *testing.T) {
	var vs domain.Violations
	got := form.ParseOrigins(&vs, "settings.allowed_origins", []string{"HTTPS://Owner.Example:443", "http://[::1]:8080", "http://localhost:8080"})
	if err := vs.Err(); err != nil || strings.Join(form.OriginStrings(got), " ") != "https://owner.example http://[::1]:8080 http://localhost:8080" {
		t.Fatalf("ParseOrigins = %v, %v", got, err)
	}
	bad := []string{
		"https://a.example;sandbox", "https://a.example sandbox", "https://a.example/", "https://a.example/x",
		"https://a.example?x", "https://a.example#x", "https://*.example", "*", "'self'", "'none'",
		"https://a.example,https://b.example", "ftp://a.example", "a.example", "https://u@a.example",
		"https://a.example:0", "https://a.example:", "https://a.example\x00", "https://bücher.example",
		"https://a.example'", "https://.example", "",
	}
	vs = domain.Violations{}
	got = form.ParseOrigins(&vs, "settings.embed.frame_ancestors", append([]string{"https://ok.example"}, bad...))
	if len(got) != 1 || got[0].String() != "https://ok.example" {
		t.Fatalf("kept %v", got)
	}
	for i := range bad {
		if !hasViolation(vs, fmt.Sprintf("settings.embed.frame_ancestors[%d]", i+1), "invalid_origin") {
			t.Errorf("%q: no violation in %v", bad[i], vs)
		}
	}
	if form.ParseOrigins(&vs, "x", nil) != nil || form.OriginStrings(nil) != nil {
		t.Fatal("nil list")
	}
}

// TestSettingsStoredCanonical: accepted URLs and origins are kept in their canonical form, and
// a redirect URL that would inject CSP directives is refused.
func TestSettingsStoredCanonical(t *testing.T) {
	ids, _ := seqIDs()
	f, err := form.New("frm_1", "wsp_1", form.Draft{Name: "F", Settings: &form.Settings{
		RedirectURL: ptr("HTTPS://Owner.Example/thanks"),
		Embed:       form.Embed{FrameAncestors: origins(t, "HTTPS://Owner.Example:443"), CORSOrigins: origins(t, "https://Owner.Example")},
	}}, ids, form.DefaultLimits, t0)
	if err != nil {
		t.Fatal(err)
	}
	s := f.Settings()
	if *s.RedirectURL != "https://owner.example/thanks" || s.Embed.FrameAncestors[0].String() != "https://owner.example" || s.Embed.CORSOrigins[0].String() != "https://owner.example" {
		t.Fatalf("settings not canonical: %+v", s)
	}
	_, err = f.Apply(form.Patch{Settings: &form.Settings{RedirectURL: ptr("https://a.example;sandbox;report-uri/")}}, ids, form.DefaultLimits, t1)
	if vs := violations(t, err); !hasViolation(vs, "settings.redirect_url", "invalid_url") {
		t.Fatalf("violations %v", vs)
	}
	if *f.Settings().RedirectURL != "https://owner.example/thanks" {
		t.Fatal("a refused patch changed the settings")
	}
}
