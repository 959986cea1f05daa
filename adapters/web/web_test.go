package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/formward/formward/adapters/httpkit"
	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	"github.com/formward/formward/adapters/web"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/ports"
)

func portsPage() ports.Page { return ports.Page{Limit: 100} }

func ptr(s string) *string { return &s }

// everyType is one field of each of the nine types.
func everyType() []form.FieldSpec {
	return []form.FieldSpec{
		{Label: "Name", Type: "text", Required: true, Placeholder: ptr("Ada Lovelace")},
		{Label: "Email", Type: "email", Required: true},
		{Label: "Age", Type: "number"},
		{Label: "Country", Type: "dropdown", Options: []string{"France", "Japan"}},
		{Label: "Topics", Type: "checkbox", Options: []string{"News", "Offers"}},
		{Label: "I agree", Type: "checkbox"},
		{Label: "Contact by", Type: "radio", Options: []string{"Mail", "Phone"}, Required: true},
		{Label: "Message", Type: "textarea"},
		{Label: "Attachment", Type: "file"},
		{Label: "Birthday", Type: "date"},
	}
}

func TestPageRendersEveryFieldTypeAccessibly(t *testing.T) {
	h := newHarness(t)
	f := h.form(form.StatusPublished, guarded(), everyType()...)
	rec := h.get("/f/" + f.ID())
	if rec.Code != 200 {
		t.Fatalf("status %d", rec.Code)
	}
	page := body(rec)
	ids := map[string]string{}
	for _, fl := range f.Fields() {
		ids[fl.Label] = fl.ID
	}
	for _, want := range []string{
		`<meta name="viewport" content="width=device-width, initial-scale=1">`,
		`enctype="multipart/form-data"`,
		`<label for="f-` + ids["Name"] + `">Name <span class="req" aria-hidden="true">*</span>`,
		`type="text" id="f-` + ids["Name"] + `" name="` + ids["Name"] + `" value="" placeholder="Ada Lovelace" required aria-required="true"`,
		`type="email" id="f-` + ids["Email"] + `"`,
		`type="number" id="f-` + ids["Age"] + `"`,
		`<select id="f-` + ids["Country"] + `"`,
		`<option value="Japan">Japan</option>`,
		`<fieldset id="f-` + ids["Topics"] + `"`,
		`type="checkbox" id="f-` + ids["Topics"] + `-1" name="` + ids["Topics"] + `" value="Offers"`,
		`type="checkbox" id="f-` + ids["I agree"] + `" name="` + ids["I agree"] + `" value="true"`,
		`<fieldset id="f-` + ids["Contact by"] + `" role="radiogroup" aria-required="true">`,
		`<legend>Contact by`,
		`type="radio" id="f-` + ids["Contact by"] + `-0" name="` + ids["Contact by"] + `" value="Mail" required`,
		`<textarea id="f-` + ids["Message"] + `"`,
		`type="file" id="f-` + ids["Attachment"] + `"`,
		`type="date" id="f-` + ids["Birthday"] + `"`,
		`name="website" tabindex="-1"`, `class="hp" aria-hidden="true"`,
		`<noscript>`, `<script src="/f/assets/form.`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	hd := rec.Header()
	csp := hd.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'self'", "script-src 'self';", "style-src 'self'", "img-src 'self' data:", "form-action 'self';", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if hd.Get("X-Frame-Options") != "DENY" || hd.Get("X-Content-Type-Options") != "nosniff" || hd.Get("Referrer-Policy") != "strict-origin-when-cross-origin" {
		t.Errorf("headers %v", hd)
	}
}

func TestPageEscapesOwnerContent(t *testing.T) {
	h := newHarness(t)
	f := h.form(form.StatusPublished, lenient(), form.FieldSpec{Label: "<script>alert(1)</script>", Type: "dropdown", Options: []string{`"><img src=x onerror=alert(2)>`}})
	page := body(h.get("/f/" + f.ID()))
	if strings.Contains(page, "<script>alert(1)") || strings.Contains(page, "<img src=x") {
		t.Fatalf("owner content not escaped:\n%s", page)
	}
	if !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("escaped label missing")
	}
}

func TestFileInputFiltersByTheFieldsTypes(t *testing.T) {
	h := newHarness(t)
	f := h.form(form.StatusPublished, lenient(), form.FieldSpec{Label: "CV", Type: "file", Accept: []string{"application/pdf", "image/*"}})
	page := body(h.get("/f/" + f.ID()))
	if !strings.Contains(page, `accept="application/pdf,image/*"`) {
		t.Fatalf("file input lacks the accept filter:\n%s", page)
	}
}

func TestPageFramingAndCaptchaOrigins(t *testing.T) {
	h := newHarness(t)
	s := lenient()
	s.Embed.FrameAncestors = origins(t, "https://owner.example", "http://[::1]:8080")
	s.RedirectURL = ptr("https://owner.example/thanks")
	s.Spam.Captcha = &form.Captcha{Provider: form.CaptchaTurnstile, SiteKey: "site-key", Secret: "secret"}
	f := h.form(form.StatusPublished, s, form.FieldSpec{Label: "Name", Type: "text"})
	rec := h.get("/f/" + f.ID())
	csp := rec.Header().Get("Content-Security-Policy")
	for _, want := range []string{"frame-ancestors https://owner.example http://[::1]:8080;", "script-src 'self' https://challenges.cloudflare.com", "form-action 'self' https://owner.example"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if rec.Header().Get("X-Frame-Options") != "" {
		t.Error("X-Frame-Options set although ancestors are allowed")
	}
	if page := body(rec); !strings.Contains(page, `class="cf-turnstile" data-sitekey="site-key"`) || strings.Contains(page, "secret") {
		t.Error("captcha widget missing or secret leaked")
	}
}

func TestStatusPages(t *testing.T) {
	h := newHarness(t)
	draft := h.form(form.StatusDraft, nil)
	archived := h.form(form.StatusArchived, nil)
	if rec := h.get("/f/" + draft.ID()); rec.Code != 404 {
		t.Errorf("draft: %d", rec.Code)
	}
	if rec := h.get("/f/frm_unknown"); rec.Code != 404 || !strings.Contains(body(rec), "does not exist") {
		t.Errorf("unknown: %d", rec.Code)
	}
	rec := h.get("/f/" + archived.ID())
	if rec.Code != 200 || !strings.Contains(body(rec), "This form is closed") {
		t.Errorf("archived: %d %s", rec.Code, body(rec))
	}
	if rec := h.postForm("/f/"+archived.ID(), url.Values{}); rec.Code != 409 {
		t.Errorf("post to archived: %d", rec.Code)
	}
	req := httptest.NewRequest("POST", "/f/"+archived.ID(), strings.NewReader(`{"data":{}}`))
	req.Header.Set("Content-Type", "application/json")
	if rec := h.do(req); rec.Code != 409 || !strings.Contains(body(rec), "form_closed") {
		t.Errorf("JSON post to archived: %d", rec.Code)
	}
}

func TestAssetsAreServedWithCaching(t *testing.T) {
	h := newHarness(t)
	for _, p := range []string{"/f/assets/form.css", "/f/assets/form.js"} {
		rec := h.get(p)
		if rec.Code != 200 || !strings.Contains(rec.Header().Get("Cache-Control"), "max-age") {
			t.Errorf("%s: %d %v", p, rec.Code, rec.Header())
		}
	}
}

func TestURLEncodedCaptureStoresMetadataAndEvent(t *testing.T) {
	h := newHarness(t)
	f := h.form(form.StatusPublished, lenient(), everyType()...)
	id := map[string]string{}
	for _, fl := range f.Fields() {
		id[fl.Label] = fl.ID
	}
	token, _ := h.page(f, "?utm_source=news&utm_campaign=spring&other=x")
	v := url.Values{"_token": {token}, "_utm_source": {"news"}, "_utm_campaign": {"spring"}, "website": {""},
		id["Name"]: {"Ada"}, id["Email"]: {"ada@example.com"}, id["Age"]: {"36"}, id["Country"]: {"Japan"},
		id["Topics"]: {"News", "Offers"}, id["I agree"]: {"true"}, id["Contact by"]: {"Phone"}, id["Message"]: {"Hello"}, id["Birthday"]: {"1815-12-10"}}
	rec := h.postForm("/f/"+f.ID(), v, "User-Agent", "test-agent", "Referer", "https://owner.example/contact")
	if rec.Code != 200 || !strings.Contains(body(rec), "Thank you") {
		t.Fatalf("status %d %s", rec.Code, body(rec))
	}
	subs := h.submissions(f)
	if len(subs) != 1 {
		t.Fatalf("%d submissions", len(subs))
	}
	s := subs[0]
	m := s.Metadata()
	if m.Source != submission.SourceForm || m.IPHash == nil || *m.IPHash != h.hasher.Hash(h.ip) || *m.IPHash == h.ip {
		t.Errorf("metadata %+v", m)
	}
	if m.UserAgent == nil || *m.UserAgent != "test-agent" || m.Referrer == nil || *m.Referrer != "https://owner.example/contact" {
		t.Errorf("user agent / referrer %+v", m)
	}
	if m.UTM["utm_source"] != "news" || m.UTM["utm_campaign"] != "spring" || len(m.UTM) != 2 {
		t.Errorf("utm %v", m.UTM)
	}
	d := s.Data()
	if got := d[id["Topics"]].Strings(); len(got) != 2 || d[id["I agree"]].String() != "true" || d[id["Age"]].String() != "36" {
		t.Errorf("data %v", d)
	}
	recs, err := persistence.NewOutbox(h.db, persistencetest.Cipher()).Pending(context.Background(), 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range recs {
		found = found || (r.Event.Type == event.SubmissionCreated)
	}
	if !found {
		t.Error("no submission.created in the outbox")
	}
}

func TestSingleCheckboxUncheckedIsFalse(t *testing.T) {
	h := newHarness(t)
	f := h.form(form.StatusPublished, lenient(), form.FieldSpec{Label: "News", Type: "checkbox"})
	token, _ := h.page(f, "")
	if rec := h.postForm("/f/"+f.ID(), url.Values{"_token": {token}}); rec.Code != 200 {
		t.Fatalf("%d %s", rec.Code, body(rec))
	}
	if got := h.submissions(f)[0].Data()[f.Fields()[0].ID].String(); got != "false" {
		t.Errorf("got %q", got)
	}
}

func TestValidationRerendersWithErrorsAndValues(t *testing.T) {
	h := newHarness(t)
	f := h.form(form.StatusPublished, lenient(), everyType()...)
	id := map[string]string{}
	for _, fl := range f.Fields() {
		id[fl.Label] = fl.ID
	}
	token, _ := h.page(f, "?utm_medium=mail")
	rec := h.postForm("/f/"+f.ID(), url.Values{"_token": {token}, "_utm_medium": {"mail"}, id["Email"]: {"not-an-email"},
		id["Message"]: {"<b>keep me</b>"}, id["Topics"]: {"Offers"}, id["Country"]: {"Japan"}})
	if rec.Code != 422 {
		t.Fatalf("status %d", rec.Code)
	}
	page := body(rec)
	for _, want := range []string{
		`id="error-summary" role="alert"`,
		`<a href="#f-` + id["Name"] + `">`,
		`<a href="#f-` + id["Contact by"] + `-0">`,
		`id="f-` + id["Email"] + `" name="` + id["Email"] + `" value="not-an-email" required aria-required="true" aria-invalid="true" aria-describedby="f-` + id["Email"] + `-error"`,
		`<p class="field-error" id="f-` + id["Email"] + `-error">`,
		`&lt;b&gt;keep me&lt;/b&gt;</textarea>`,
		`value="Offers" checked`,
		`<option value="Japan" selected>`,
		`name="_utm_medium" value="mail"`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	if n := len(h.submissions(f)); n != 0 {
		t.Errorf("%d stored", n)
	}
}

func TestMultipartCapture(t *testing.T) {
	h := newHarness(t)
	f := h.form(form.StatusPublished, lenient(), form.FieldSpec{Label: "Name", Type: "text", Required: true}, form.FieldSpec{Label: "CV", Type: "file"})
	token, _ := h.page(f, "")
	send := func(withFile bool) *httptest.ResponseRecorder {
		var buf bytes.Buffer
		w := multipart.NewWriter(&buf)
		_ = w.WriteField("_token", token)
		_ = w.WriteField(f.Fields()[0].ID, "Ada")
		if withFile {
			fw, _ := w.CreateFormFile(f.Fields()[1].ID, "cv.pdf")
			_, _ = fw.Write([]byte("%PDF-1.4"))
		}
		_ = w.Close()
		req := httptest.NewRequest("POST", "/f/"+f.ID(), &buf)
		req.Header.Set("Content-Type", w.FormDataContentType())
		return h.do(req)
	}
	if rec := send(true); rec.Code != 422 || !strings.Contains(body(rec), "file uploads are not available") {
		t.Errorf("with a file: %d", rec.Code)
	}
	token, _ = h.page(f, "")
	if rec := send(false); rec.Code != 200 {
		t.Errorf("without a file: %d %s", rec.Code, body(rec))
	}
	if n := len(h.submissions(f)); n != 1 {
		t.Errorf("%d stored", n)
	}
}

func TestJSONCaptureWithCORS(t *testing.T) {
	h := newHarness(t)
	s := lenient()
	s.Embed.CORSOrigins = origins(t, "https://owner.example")
	f := h.form(form.StatusPublished, s, form.FieldSpec{Label: "Email", Type: "email", Required: true}, form.FieldSpec{Label: "Age", Type: "number"})
	pre := httptest.NewRequest("OPTIONS", "/f/"+f.ID(), nil)
	pre.Header.Set("Origin", "https://owner.example")
	pre.Header.Set("Access-Control-Request-Method", "POST")
	if rec := h.do(pre); rec.Code != 204 || rec.Header().Get("Access-Control-Allow-Origin") != "https://owner.example" {
		t.Errorf("preflight: %d %v", rec.Code, rec.Header())
	}
	pre.Header.Set("Origin", "https://evil.example")
	if rec := h.do(pre); rec.Code != 403 || rec.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("foreign preflight: %d", rec.Code)
	}
	post := func(b string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("POST", "/f/"+f.ID(), strings.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", "https://owner.example")
		req.Header.Set("Referer", "https://owner.example/page?utm_source=ads")
		return h.do(req)
	}
	email, age := f.Fields()[0].ID, f.Fields()[1].ID
	rec := post(`{"data": {"` + email + `": "a@example.com", "` + age + `": 7}}`)
	if rec.Code != 201 || rec.Header().Get("Access-Control-Allow-Origin") != "https://owner.example" {
		t.Fatalf("%d %s", rec.Code, body(rec))
	}
	var out struct{ ID string }
	_ = json.Unmarshal(rec.Body.Bytes(), &out)
	subs := h.submissions(f)
	if len(subs) != 1 || subs[0].ID() != out.ID || subs[0].Metadata().UTM["utm_source"] != "ads" {
		t.Errorf("stored %v, id %q", subs, out.ID)
	}
	rec = post(`{"data": {"` + email + `": "nope"}}`)
	var bad struct {
		Error struct {
			Code    string
			Details []struct{ Field, Code string }
		}
	}
	_ = json.Unmarshal(rec.Body.Bytes(), &bad)
	if rec.Code != 422 || bad.Error.Code != "validation_failed" || len(bad.Error.Details) != 1 || bad.Error.Details[0].Field != email {
		t.Errorf("invalid: %d %s", rec.Code, body(rec))
	}
}

func TestRedirectAfterSuccess(t *testing.T) {
	h := newHarness(t)
	s := lenient()
	s.RedirectURL = ptr("https://owner.example/thanks")
	f := h.form(form.StatusPublished, s, form.FieldSpec{Label: "Name", Type: "text"})
	token, _ := h.page(f, "")
	rec := h.postForm("/f/"+f.ID(), url.Values{"_token": {token}, f.Fields()[0].ID: {"Ada"}})
	if rec.Code != 303 || rec.Header().Get("Location") != "https://owner.example/thanks" {
		t.Errorf("%d %v", rec.Code, rec.Header())
	}
}

func TestHoneypotFakesSuccess(t *testing.T) {
	h := newHarness(t)
	f := h.form(form.StatusPublished, lenient(), form.FieldSpec{Label: "Name", Type: "text"})
	token, _ := h.page(f, "")
	rec := h.postForm("/f/"+f.ID(), url.Values{"_token": {token}, "website": {"http://spam.example"}, f.Fields()[0].ID: {"Bot"}})
	if rec.Code != 200 || !strings.Contains(body(rec), "Thank you") {
		t.Errorf("%d", rec.Code)
	}
	if len(h.submissions(f)) != 0 || h.spam(f, web.ReasonHoneypot) != 1 {
		t.Error("honeypot post stored or not counted")
	}
}

func TestRenderTokenRules(t *testing.T) {
	h := newHarness(t)
	s := form.DefaultSettings()
	s.Spam.ProofOfWork = false
	f := h.form(form.StatusPublished, &s, form.FieldSpec{Label: "Name", Type: "text"})
	name := f.Fields()[0].ID
	post := func(token string) int {
		return h.postForm("/f/"+f.ID(), url.Values{"_token": {token}, name: {"Ada"}}).Code
	}

	if code := post(""); code != 403 || h.spam(f, web.ReasonTokenMissing) != 1 {
		t.Errorf("missing token: %d", code)
	}
	if code := post("1.abc.forged"); code != 403 || h.spam(f, web.ReasonTokenInvalid) != 1 {
		t.Errorf("forged token: %d", code)
	}
	token, _ := h.page(f, "")
	if code := post(token); code != 403 || h.spam(f, web.ReasonTooFast) != 1 {
		t.Errorf("too fast: %d", code)
	}
	h.clock.Add(5 * time.Second)
	if code := post(token); code != 200 {
		t.Errorf("after 5 s: %d", code)
	}
	if code := post(token); code != 403 || h.spam(f, web.ReasonTokenReplay) != 1 {
		t.Errorf("replay: %d", code)
	}
	old, _ := h.page(f, "")
	h.clock.Add(25 * time.Hour)
	if code := post(old); code != 403 || h.spam(f, web.ReasonTokenExpired) != 1 {
		t.Errorf("expired: %d", code)
	}
	if n := len(h.submissions(f)); n != 1 {
		t.Errorf("%d stored", n)
	}
}

func TestProofOfWork(t *testing.T) {
	h := newHarness(t)
	f := h.form(form.StatusPublished, powOnly(), form.FieldSpec{Label: "Name", Type: "text"})
	name := f.Fields()[0].ID
	token, ch := h.page(f, "")
	if ch == nil {
		t.Fatal("no challenge on the page")
	}
	if rec := h.postForm("/f/"+f.ID(), url.Values{"_token": {token}, name: {"Ada"}}); rec.Code != 403 || h.spam(f, web.ReasonPoWMissing) != 1 {
		t.Errorf("missing: %d", rec.Code)
	}
	if rec := h.postForm("/f/"+f.ID(), url.Values{"_token": {token}, "altcha": {"eyJub3QiOiJ2YWxpZCJ9"}, name: {"Ada"}}); rec.Code != 403 || h.spam(f, web.ReasonPoWInvalid) != 1 {
		t.Errorf("invalid: %d", rec.Code)
	}
	// A solution of another page's challenge does not fit this token.
	_, other := h.page(f, "")
	foreign, _ := web.Solve(*other)
	if rec := h.postForm("/f/"+f.ID(), url.Values{"_token": {token}, "altcha": {foreign}, name: {"Ada"}}); rec.Code != 403 || h.spam(f, web.ReasonPoWInvalid) != 2 {
		t.Errorf("foreign solution: %d", rec.Code)
	}
	payload, ok := web.Solve(*ch)
	if !ok {
		t.Fatal("challenge not solvable")
	}
	if rec := h.postForm("/f/"+f.ID(), url.Values{"_token": {token}, "altcha": {payload}, name: {"Ada"}}); rec.Code != 200 {
		t.Errorf("solved: %d %s", rec.Code, body(rec))
	}
	if n := len(h.submissions(f)); n != 1 {
		t.Errorf("%d stored", n)
	}
}

func TestChallengeEndpointForJSONPosts(t *testing.T) {
	h := newHarness(t)
	f := h.form(form.StatusPublished, powOnly(), form.FieldSpec{Label: "Name", Type: "text"})
	rec := h.get("/f/" + f.ID() + "/challenge")
	var out struct {
		Token  string
		Altcha web.Challenge
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || rec.Code != 200 {
		t.Fatalf("%d %s", rec.Code, body(rec))
	}
	payload, _ := web.Solve(out.Altcha)
	b, _ := json.Marshal(map[string]any{"data": map[string]any{f.Fields()[0].ID: "Ada"}, "token": out.Token, "altcha": payload})
	req := httptest.NewRequest("POST", "/f/"+f.ID(), bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	if rec := h.do(req); rec.Code != 201 {
		t.Errorf("%d %s", rec.Code, body(rec))
	}
}

func TestCaptchaVerification(t *testing.T) {
	var got url.Values
	verify := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		got = r.PostForm
		_, _ = w.Write([]byte(`{"success": ` + map[bool]string{true: "true", false: "false"}[r.PostForm.Get("response") == "good"] + `}`))
	}))
	defer verify.Close()
	h := newHarness(t, func(o *web.Options) {
		o.CaptchaVerifyURLs = map[form.CaptchaProvider]string{form.CaptchaHCaptcha: verify.URL}
	})
	s := lenient()
	s.Spam.Captcha = &form.Captcha{Provider: form.CaptchaHCaptcha, SiteKey: "sk", Secret: "the-secret"}
	f := h.form(form.StatusPublished, s, form.FieldSpec{Label: "Name", Type: "text"})
	token, _ := h.page(f, "")
	if rec := h.postForm("/f/"+f.ID(), url.Values{"_token": {token}, "h-captcha-response": {"bad"}}); rec.Code != 403 || h.spam(f, web.ReasonCaptcha) != 1 {
		t.Errorf("failed captcha: %d", rec.Code)
	}
	if got.Get("secret") != "the-secret" || got.Get("remoteip") != h.ip {
		t.Errorf("verify request %v", got)
	}
	if rec := h.postForm("/f/"+f.ID(), url.Values{"_token": {token}, "h-captcha-response": {"good"}}); rec.Code != 200 {
		t.Errorf("good captcha: %d %s", rec.Code, body(rec))
	}
	if n := len(h.submissions(f)); n != 1 {
		t.Errorf("%d stored", n)
	}
}

func TestRateLimitPerIPAndForm(t *testing.T) {
	h := newHarness(t, func(o *web.Options) { o.RateLimit = 3 })
	f := h.form(form.StatusPublished, lenient(), form.FieldSpec{Label: "Name", Type: "text"})
	other := h.form(form.StatusPublished, lenient(), form.FieldSpec{Label: "Name", Type: "text"})
	for i := 0; i < 3; i++ {
		token, _ := h.page(f, "")
		if rec := h.postForm("/f/"+f.ID(), url.Values{"_token": {token}}); rec.Code != 200 {
			t.Fatalf("post %d: %d", i, rec.Code)
		}
	}
	token, _ := h.page(f, "")
	rec := h.postForm("/f/"+f.ID(), url.Values{"_token": {token}})
	if rec.Code != 429 || rec.Header().Get("Retry-After") == "" || !strings.Contains(body(rec), "wait a minute") {
		t.Errorf("4th post: %d %v", rec.Code, rec.Header())
	}
	if h.spam(f, web.ReasonRateLimited) != 1 {
		t.Error("rate limit not counted")
	}
	token, _ = h.page(other, "")
	if rec := h.postForm("/f/"+other.ID(), url.Values{"_token": {token}}); rec.Code != 200 {
		t.Errorf("other form: %d", rec.Code)
	}
	h.ip = "198.51.100.9"
	token, _ = h.page(f, "")
	if rec := h.postForm("/f/"+f.ID(), url.Values{"_token": {token}}); rec.Code != 200 {
		t.Errorf("other address: %d", rec.Code)
	}
	h.clock.Add(61 * time.Second)
	h.ip = "203.0.113.7"
	token, _ = h.page(f, "")
	if rec := h.postForm("/f/"+f.ID(), url.Values{"_token": {token}}); rec.Code != 200 {
		t.Errorf("next minute: %d", rec.Code)
	}
}

func TestForwardedForOnlyFromTrustedProxies(t *testing.T) {
	proxies, err := httpkit.ParseTrustedProxies("10.0.0.0/8, 192.168.1.1")
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, func(o *web.Options) { o.TrustedProxies = proxies })
	f := h.form(form.StatusPublished, lenient(), form.FieldSpec{Label: "Name", Type: "text"})
	send := func(peer, xff string) {
		token, _ := h.page(f, "")
		req := httptest.NewRequest("POST", "/f/"+f.ID(), strings.NewReader(url.Values{"_token": {token}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-Forwarded-For", xff)
		req.RemoteAddr = peer
		if rec := h.do(req); rec.Code != 200 {
			t.Fatalf("%d", rec.Code)
		}
	}
	send("10.1.2.3:5000", "1.1.1.1, 198.51.100.20")
	send("203.0.113.50:5000", "198.51.100.21")
	subs := h.submissions(f)
	want := map[string]bool{h.hasher.Hash("198.51.100.20"): true, h.hasher.Hash("203.0.113.50"): true}
	for _, s := range subs {
		if !want[*s.Metadata().IPHash] {
			t.Errorf("unexpected IP hash %s", *s.Metadata().IPHash)
		}
	}
}

// A script's JSON post names fields by ID or key, as the API's data does: the answers are
// stored by field ID, and one field named both ways is 422 invalid_value.
func TestJSONPostNamesFieldsByKey(t *testing.T) {
	h := newHarness(t)
	f := h.form(form.StatusPublished, lenient(), form.FieldSpec{Label: "Email", Type: "email", Required: true}, form.FieldSpec{Label: "Age", Type: "number"})
	email, age := f.Fields()[0].ID, f.Fields()[1].ID
	token, _ := h.page(f, "")
	rec := h.postJSON(f, map[string]any{"token": token, "data": map[string]any{"email": "a@example.com", age: 7}})
	if rec.Code != 201 {
		t.Fatalf("by key: %d %s", rec.Code, body(rec))
	}
	subs := h.submissions(f)
	if len(subs) != 1 || fmt.Sprint(subs[0].Data()) != fmt.Sprint(map[string]any{email: "a@example.com", age: "7"}) {
		t.Fatalf("stored %v", subs)
	}
	token, _ = h.page(f, "")
	rec = h.postJSON(f, map[string]any{"token": token, "data": map[string]any{"email": "a@example.com", email: "b@example.com"}})
	if rec.Code != 422 || !strings.Contains(body(rec), `"field":"`+email+`","code":"invalid_value"`) {
		t.Fatalf("named both ways: %d %s", rec.Code, body(rec))
	}
	if n := len(h.submissions(f)); n != 1 {
		t.Fatalf("%d stored", n)
	}
}

// TestHelpTextDescribesTheControl: a field's help is drawn under its label, escaped, and named
// by aria-describedby of the control (a group's fieldset), before the error line after a failed
// post; a field without help, or with a blank one, gets neither the paragraph nor the reference.
func TestHelpTextDescribesTheControl(t *testing.T) {
	h := newHarness(t)
	help := "We reply <b>within</b> a day.\nNever shared."
	f := h.form(form.StatusPublished, lenient(),
		form.FieldSpec{Label: "Email", Type: "email", Required: true, Help: ptr(help)},
		form.FieldSpec{Label: "Contact by", Type: "radio", Options: []string{"Mail", "Phone"}, Required: true, Help: ptr("Pick one.")},
		form.FieldSpec{Label: "I agree", Type: "checkbox", Help: ptr("Optional.")},
		form.FieldSpec{Label: "Country", Type: "dropdown", Options: []string{"France"}, Help: ptr("Where you live.")},
		form.FieldSpec{Label: "Notes", Type: "textarea", Help: ptr("  ")},
		form.FieldSpec{Label: "Age", Type: "number"},
	)
	id := map[string]string{}
	for _, fl := range f.Fields() {
		id[fl.Label] = fl.ID
	}
	page := body(h.get("/f/" + f.ID()))
	token, _ := h.page(f, "")
	for _, want := range []string{
		`<label for="f-` + id["Email"] + `">Email`,
		`<p class="field-help" id="f-` + id["Email"] + `-help">We reply &lt;b&gt;within&lt;/b&gt; a day.` + "\n" + `Never shared.</p>`,
		`id="f-` + id["Email"] + `" name="` + id["Email"] + `" value="" required aria-required="true" aria-describedby="f-` + id["Email"] + `-help"`,
		`<fieldset id="f-` + id["Contact by"] + `" role="radiogroup" aria-describedby="f-` + id["Contact by"] + `-help" aria-required="true">`,
		`<p class="field-help" id="f-` + id["Contact by"] + `-help">Pick one.</p>`,
		`value="true" aria-describedby="f-` + id["I agree"] + `-help"><label`,
		`<select id="f-` + id["Country"] + `" name="` + id["Country"] + `" aria-describedby="f-` + id["Country"] + `-help">`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	for _, absent := range []string{`id="f-` + id["Notes"] + `-help"`, `id="f-` + id["Age"] + `-help"`} {
		if strings.Contains(page, absent) {
			t.Errorf("page has %s", absent)
		}
	}
	if strings.Count(page, `class="field-help"`) != 4 {
		t.Errorf("help paragraphs = %d, want 4", strings.Count(page, `class="field-help"`))
	}

	rec := h.postForm("/f/"+f.ID(), url.Values{"_token": {token}, id["Email"]: {"not-an-email"}})
	if rec.Code != 422 {
		t.Fatalf("status %d", rec.Code)
	}
	page = body(rec)
	for _, want := range []string{
		`value="not-an-email" required aria-required="true" aria-invalid="true" aria-describedby="f-` + id["Email"] + `-help f-` + id["Email"] + `-error"`,
		`<fieldset id="f-` + id["Contact by"] + `" role="radiogroup" aria-describedby="f-` + id["Contact by"] + `-help f-` + id["Contact by"] + `-error" aria-required="true">`,
		`-help">Pick one.</p>` + "\n" + `<p class="field-error" id="f-` + id["Contact by"] + `-error">`,
		`aria-invalid="true" aria-describedby="f-` + id["Contact by"] + `-error"><label for="f-` + id["Contact by"] + `-0">`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("failed post lacks %s", want)
		}
	}
}

// recordingCaptcha is a registered provider's verifier: it accepts "good" and records what it
// was asked.
type recordingCaptcha struct {
	mu        sync.Mutex
	responses []string
	secrets   []string
}

func (r *recordingCaptcha) Verify(_ context.Context, c *form.Captcha, response, _ string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.responses = append(r.responses, response)
	r.secrets = append(r.secrets, c.Secret)
	if response != "good" {
		return errors.New("bad response")
	}
	return nil
}

// A provider a custom build registers gets its widget on the page (script, element class,
// CSP origins) and its verifier the response posted in its own field.
func TestRegisteredCaptchaProvider(t *testing.T) {
	verifier := &recordingCaptcha{}
	h := newHarness(t, func(o *web.Options) {
		o.Captchas = web.BuiltinCaptchas(nil, nil)
		o.Captchas["friendly"] = web.Captcha{CaptchaWidget: web.CaptchaWidget{
			Script: "https://cdn.friendly.example/widget.js", Origins: []string{"https://cdn.friendly.example"},
			Class: "frc-captcha", Response: "frc-captcha-solution",
		}, Verifier: verifier}
	})
	s := lenient()
	s.Spam.Captcha = &form.Captcha{Provider: "friendly", SiteKey: "fr-site", Secret: "fr-secret"}
	f := h.form(form.StatusPublished, s, form.FieldSpec{Label: "Name", Type: "text"})
	rec := h.get("/f/" + f.ID())
	if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self' https://cdn.friendly.example") {
		t.Errorf("CSP %q lacks the widget's origin", csp)
	}
	page := body(rec)
	if !strings.Contains(page, `class="frc-captcha" data-sitekey="fr-site"`) || !strings.Contains(page, `src="https://cdn.friendly.example/widget.js"`) {
		t.Errorf("widget missing:\n%s", page)
	}
	token, _ := h.page(f, "")
	if rec := h.postForm("/f/"+f.ID(), url.Values{"_token": {token}, "frc-captcha-solution": {"bad"}}); rec.Code != 403 || h.spam(f, web.ReasonCaptcha) != 1 {
		t.Errorf("failed captcha: %d", rec.Code)
	}
	token, _ = h.page(f, "")
	if rec := h.postForm("/f/"+f.ID(), url.Values{"_token": {token}, "frc-captcha-solution": {"good"}}); rec.Code != 200 {
		t.Errorf("good captcha: %d %s", rec.Code, body(rec))
	}
	verifier.mu.Lock()
	defer verifier.mu.Unlock()
	if !slices.Equal(verifier.responses, []string{"bad", "good"}) || verifier.secrets[0] != "fr-secret" {
		t.Errorf("verifier saw %v with secrets %v", verifier.responses, verifier.secrets)
	}
}
