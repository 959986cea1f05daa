package web

import (
	"bytes"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/formward/formward/domain/form"
)

func cacheTestForm(name string, s form.Settings) *form.Form {
	ph := `Ada "A+B" <Lovelace> & 'co'`
	desc := `Tell us <b>everything</b> & more + "quotes"`
	help := "Two lines <i>of</i> help & \"quotes\" + 'x'\nsecond line"
	fields := []form.Field{
		{ID: "fld_a", Label: `Name <&> "x" + 'y'`, Type: form.TypeText, Required: true, Placeholder: &ph},
		{ID: "fld_b", Label: "Email", Type: form.TypeEmail, Required: true, Help: &help},
		{ID: "fld_c", Label: "Age", Type: form.TypeNumber},
		{ID: "fld_d", Label: "Country", Type: form.TypeDropdown, Options: []string{"France", `Ja"pan & <co>`}, Help: &help},
		{ID: "fld_e", Label: "Topics", Type: form.TypeCheckbox, Options: []string{"News", "Offers+"}},
		{ID: "fld_f", Label: "I agree", Type: form.TypeCheckbox},
		{ID: "fld_g", Label: "Contact by", Type: form.TypeRadio, Options: []string{"Mail", "Phone"}, Required: true, Help: &help},
		{ID: "fld_h", Label: "Message", Type: form.TypeTextarea, Placeholder: &ph},
		{ID: "fld_i", Label: "Attachment", Type: form.TypeFile, Accept: []string{"application/pdf", "image/*"}},
		{ID: "fld_j", Label: "Birthday", Type: form.TypeDate},
	}
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	return form.UnmarshalWithSettingsFromDatabase("frm_cache", "ws_1", name, &desc, form.StatusPublished, fields, s, now, now)
}

// cacheTestPagedForm has pages, a display rule and a hidden field.
func cacheTestPagedForm(s form.Settings) *form.Form {
	fields := []form.Field{
		{ID: "fld_a", Key: "a", Label: "Role", Type: form.TypeRadio, Options: []string{"A", `B"<&>`}, Page: 1},
		{ID: "fld_b", Key: "b", Label: "Why", Type: form.TypeText, Page: 1,
			ShowIf: &form.ShowIf{Conditions: []form.Condition{{FieldID: "fld_a", Operator: "equals", Value: `B"<&>`}}}},
		{ID: "fld_s", Key: "src", Label: "Source", Type: form.TypeText, Hidden: true, Page: 1},
		{ID: "fld_c", Key: "c", Label: "More", Type: form.TypeText, Page: 2},
	}
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	return form.UnmarshalWithSettingsFromDatabase("frm_paged", "ws_1", "Paged", nil, form.StatusPublished, fields, s, now, now)
}

// The cached page with the per-view values spliced in is byte for byte the page the template
// draws with the same values, whatever characters those values hold.
func TestCachedPageEqualsFullRender(t *testing.T) {
	h, err := New(Deps{}, Options{TokenKey: []byte("k"), PoWKey: []byte("p")})
	if err != nil {
		t.Fatal(err)
	}
	captcha := form.DefaultSettings()
	captcha.Spam.Captcha = &form.Captcha{Provider: form.CaptchaTurnstile, SiteKey: `site"key+<1>`}
	noPoW := form.DefaultSettings()
	noPoW.Spam.ProofOfWork, noPoW.Spam.Honeypot = false, false
	views := []struct {
		token, challenge string
		utm              map[string]string
	}{
		{"tok.abc_DEF-123", `{"algorithm":"SHA-256","challenge":"abc","salt":"s?expires=1&x=2","signature":"f+o"}`, nil},
		{`we"ird<&>+'` + "\x00é\uFFFD\xff", `{"a":"<script>\u2028"}`, map[string]string{"utm_source": `news"letter <&> + 'x'`, "utm_campaign": "spring\x00sale", "utm_term": "é"}},
	}
	for i, s := range []form.Settings{form.DefaultSettings(), captcha, noPoW, form.DefaultSettings()} {
		f := cacheTestForm(`Contact "us" <now> & + 'then'`, s)
		if i == 3 {
			f = cacheTestPagedForm(s)
		}
		data := formData(f, h.opts.Captchas, nil, nil, "", 0)
		p, err := h.buildPage(data)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range views {
			want := data
			want.Token = v.token
			if s.Spam.ProofOfWork {
				want.Challenge = v.challenge
			}
			want.UTM = utmValues(v.utm)
			var full bytes.Buffer
			if err := h.tmpl.ExecuteTemplate(&full, "form.html", want); err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			p.write(&got, want.Token, want.Challenge, want.UTM)
			if got.String() != full.String() {
				t.Fatalf("cached page differs from the full render:\ncached: %s\nfull:   %s", got.String(), full.String())
			}
			if !strings.Contains(got.String(), `name="_token" value="`) || strings.Contains(got.String(), "fwtok") {
				t.Fatal("token slot not filled")
			}
		}
	}
}

// Every template input of pageData is digested into the cache key; a new field must be added
// to pageKey (this count is the reminder).
func TestPageKeyCoversPageData(t *testing.T) {
	if n := reflect.TypeOf(pageData{}).NumField(); n != 22 { // W and Lang: digested as Lang.Tag
		t.Fatalf("pageData has %d fields; add the new ones to pageKey and update this count", n)
	}
	if n := reflect.TypeOf(fieldView{}).NumField(); n != 18 {
		t.Fatalf("fieldView has %d fields; add the new ones to pageKey and update this count", n)
	}
	if n := reflect.TypeOf(themeView{}).NumField(); n != 5 {
		t.Fatalf("themeView has %d fields; add the new ones to pageKey and update this count", n)
	}
	base := cacheTestForm("Contact", form.DefaultSettings())
	key := func(f *form.Form) string {
		d := formData(f, BuiltinCaptchas(nil, nil), nil, nil, "", 0)
		return pageKey(f, &d)
	}
	other := form.DefaultSettings()
	other.Spam.ProofOfWork = true
	renamed := cacheTestForm("Contact!", form.DefaultSettings())
	if key(base) != key(cacheTestForm("Contact", form.DefaultSettings())) {
		t.Fatal("the same form version gives two keys")
	}
	// Same ID and updated_at, different content: different keys.
	if key(base) == key(renamed) || key(base) == key(cacheTestForm("Contact", other)) {
		t.Fatal("a changed form has the key of its older version")
	}
	// Only a field's help text changed: another key.
	fields := base.Fields()
	changed := "Other help"
	fields[1].Help = &changed
	helped := form.UnmarshalWithSettingsFromDatabase(base.ID(), base.WorkspaceID(), base.Name(), base.Description(), base.Status(), fields, base.Settings(), base.CreatedAt(), base.UpdatedAt())
	if key(base) == key(helped) {
		t.Fatal("a changed help text keeps the key of the older version")
	}
	// A theme change (accent, appearance) shows at once: the page has another key.
	accent := "#2563eb"
	accented, dark := form.DefaultSettings(), form.DefaultSettings()
	accented.Theme.Accent = &accent
	dark.Theme.Appearance = form.AppearanceDark
	if k := key(base); k == key(cacheTestForm("Contact", accented)) || k == key(cacheTestForm("Contact", dark)) {
		t.Fatal("a themed form has the key of its unthemed version")
	}
}

func TestPageCacheBoundedAndConcurrent(t *testing.T) {
	pc, err := newPageCache()
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 600; i++ {
				k := string(rune('a'+g)) + itoa(i)
				pc.put(k, &cachedPage{parts: []string{k}})
				if p := pc.get(k); p != nil && p.parts[0] != k {
					t.Error("wrong page for key")
				}
			}
		}(g)
	}
	wg.Wait()
	if n := len(pc.pages); n > pageCacheMax {
		t.Fatalf("cache holds %d pages, cap %d", n, pageCacheMax)
	}
}
