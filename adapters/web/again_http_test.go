package web_test

import (
	"encoding/json"
	"html"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/formward/formward/adapters/web"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
)

var (
	textInputRe = regexp.MustCompile(`<input type="(?:text|email|number|date|hidden)"[^>]*? name="([^"]+)"[^>]*? value="([^"]*)"`)
	choiceRe    = regexp.MustCompile(`<input type="(?:checkbox|radio)"[^>]*? name="([^"]+)" value="([^"]*)"( checked)?`)
	selectRe    = regexp.MustCompile(`(?s)<select[^>]*? name="([^"]+)"[^>]*>(.*?)</select>`)
	selectedRe  = regexp.MustCompile(`<option value="([^"]*)" selected>`)
	textareaRe  = regexp.MustCompile(`(?s)<textarea[^>]*? name="([^"]+)"[^>]*>(.*?)</textarea>`)
	waitRe      = regexp.MustCompile(`data-wait="(\d+)"`)
)

// formValues reads what a browser would send from the page's form as drawn: text inputs and
// hidden inputs, checked choices, selected options and text areas (files aside).
func formValues(page string) url.Values {
	out := url.Values{}
	for _, m := range textInputRe.FindAllStringSubmatch(page, -1) {
		out.Add(m[1], html.UnescapeString(m[2]))
	}
	for _, m := range choiceRe.FindAllStringSubmatch(page, -1) {
		if m[3] != "" {
			out.Add(m[1], html.UnescapeString(m[2]))
		}
	}
	for _, m := range selectRe.FindAllStringSubmatch(page, -1) {
		if s := selectedRe.FindStringSubmatch(m[2]); s != nil {
			out.Add(m[1], html.UnescapeString(s[1]))
		}
	}
	for _, m := range textareaRe.FindAllStringSubmatch(page, -1) {
		out.Add(m[1], html.UnescapeString(m[2]))
	}
	return out
}

// sameAnswers reports the answers of want (by field ID) that got lacks or holds otherwise.
func sameAnswers(t *testing.T, f *form.Form, got, want url.Values) {
	t.Helper()
	for _, fl := range f.Fields() {
		if fl.Type == form.TypeFile {
			continue
		}
		g, w := slices.Sorted(slices.Values(got[fl.ID])), slices.Sorted(slices.Values(want[fl.ID]))
		if !slices.Equal(g, w) {
			t.Errorf("%s (%s): the page holds %q, the respondent sent %q", fl.Label, fl.Type, g, w)
		}
	}
}

// everyTypeForm is a form with every field type, a hidden field filled from the page URL and a
// file field; the default spam rules (honeypot, 3 s minimum fill time).
func everyTypeForm(h *harness, s *form.Settings) *form.Form {
	return h.form(form.StatusPublished, s,
		form.FieldSpec{Label: "Name", Type: "text", Required: true},
		form.FieldSpec{Label: "Email", Type: "email"},
		form.FieldSpec{Label: "Age", Type: "number"},
		form.FieldSpec{Label: "Comments", Type: "textarea"},
		form.FieldSpec{Label: "Ticket", Type: "dropdown", Options: []string{"Standard", "Student"}},
		form.FieldSpec{Label: "Diet", Type: "radio", Options: []string{"None", "Vegan"}},
		form.FieldSpec{Label: "Sessions", Type: "checkbox", Options: []string{"Keynote", "Workshops", "Dinner"}},
		form.FieldSpec{Label: "I agree", Type: "checkbox", Required: true},
		form.FieldSpec{Label: "Arrival", Type: "date"},
		form.FieldSpec{Label: "Campaign", Type: "text", Hidden: true},
		form.FieldSpec{Label: "CV", Type: "file"},
	)
}

// fill sets an answer for every field but the file and the hidden one (prefilled).
func fill(f *form.Form, v url.Values) {
	answers := map[string][]string{
		"name": {"Ada Lovelace"}, "email": {"ada@example.org"}, "age": {"36"},
		"comments": {"First line\nSecond <b>line</b> & \"quotes\""}, "ticket": {"Student"}, "diet": {"Vegan"},
		"sessions": {"Keynote", "Dinner"}, "i_agree": {"true"}, "arrival": {"2026-03-14"},
	}
	for _, fl := range f.Fields() {
		if a, ok := answers[fl.Key]; ok {
			v[fl.ID] = a
		}
	}
}

// TestTooFastKeepsEveryAnswer: a respondent who sends the form within the minimum fill time
// (autofill, a second try) sees the form again, not a dead end: every answer kept (text,
// email, number, text area, dropdown, radio, checkboxes, a single checkbox, a date, the
// hidden field from the URL, the campaign), a notice that also says the file must be attached
// again, and a fresh render token. The fill time still counts from the first view, so posting
// the page again before it passed is refused again (a bot gains nothing); once it passed, the
// page as drawn is accepted. Spam is counted as before.
func TestTooFastKeepsEveryAnswer(t *testing.T) {
	h := newHarnessWith(t, localStore(t), submission.FileLimits{}, zap.NewNop(), noRateLimit)
	f := everyTypeForm(h, lenientTiming(3))
	ids := map[string]string{}
	for _, fl := range f.Fields() {
		ids[fl.Key] = fl.ID
	}
	first := h.get("/f/" + f.ID() + "?campaign=spring&utm_source=news")
	if first.Code != 200 {
		t.Fatalf("GET: %d", first.Code)
	}
	sent := formValues(first.Body.String())
	if sent.Get(ids["campaign"]) != "spring" || sent.Get("_utm_source") != "news" || sent.Get("_token") == "" {
		t.Fatalf("first page values %v", sent)
	}
	fill(f, sent)

	h.clock.Add(time.Second)
	rec := h.postMultipart(f, sent, filePart{ids["cv"], "cv.pdf", pdf})
	page := rec.Body.String()
	if rec.Code != 403 || !strings.Contains(page, "faster than a person usually fills it in") || !strings.Contains(page, "Your answers are kept") ||
		!strings.Contains(page, "Files cannot be kept: please attach them again.") || !strings.Contains(page, `id="fw-notice" role="alert"`) {
		t.Fatalf("too fast: %d %s", rec.Code, page)
	}
	if h.spam(f, web.ReasonTooFast) != 1 || len(h.submissions(f)) != 0 {
		t.Fatalf("spam counted %v, %d stored", h.spam(f, web.ReasonTooFast), len(h.submissions(f)))
	}
	again := formValues(page)
	sameAnswers(t, f, again, sent)
	if again.Get("_utm_source") != "news" || again.Get("website") != "" {
		t.Errorf("campaign or honeypot not drawn again: %v", again)
	}
	if again.Get("_token") == "" || again.Get("_token") == sent.Get("_token") {
		t.Fatalf("no fresh render token: %q", again.Get("_token"))
	}
	// The page's script holds a post for what is left of the fill time (3 s from the first view).
	if m := waitRe.FindStringSubmatch(page); m == nil || m[1] != "2" {
		t.Errorf("data-wait %v, want 2", m)
	}

	// Sent again at once, still within 3 s of the first view: refused again, answers kept.
	rec = h.postMultipart(f, again, filePart{ids["cv"], "cv.pdf", pdf})
	if rec.Code != 403 || h.spam(f, web.ReasonTooFast) != 2 {
		t.Fatalf("second early post: %d", rec.Code)
	}
	again = formValues(rec.Body.String())
	sameAnswers(t, f, again, sent)

	// Once the fill time has passed: the page as drawn is accepted.
	h.clock.Add(2 * time.Second)
	rec = h.postMultipart(f, again, filePart{ids["cv"], "cv.pdf", pdf})
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "Thank you") {
		t.Fatalf("post again: %d %s", rec.Code, rec.Body.String())
	}
	subs := h.submissions(f)
	if len(subs) != 1 {
		t.Fatalf("%d stored", len(subs))
	}
	data := subs[0].Data()
	for key, want := range map[string]string{"name": "Ada Lovelace", "age": "36", "ticket": "Student", "diet": "Vegan", "i_agree": "true",
		"arrival": "2026-03-14", "campaign": "spring", "comments": "First line\nSecond <b>line</b> & \"quotes\""} {
		if got := data[ids[key]].String(); got != want {
			t.Errorf("stored %s = %q, want %q", key, got, want)
		}
	}
	if got := data[ids["sessions"]].Strings(); !slices.Equal(got, []string{"Keynote", "Dinner"}) {
		t.Errorf("stored sessions %v", got)
	}
	if len(data[ids["cv"]].Strings()) != 1 || subs[0].Metadata().UTM["utm_source"] != "news" {
		t.Errorf("file or campaign not stored: %v %v", data[ids["cv"]], subs[0].Metadata().UTM)
	}
}

// lenientTiming is the default rules (honeypot, render token) with minFill seconds and no
// proof of work.
func lenientTiming(minFill int) *form.Settings {
	s := form.DefaultSettings()
	s.Spam.MinFillSeconds = minFill
	return &s
}

// TestExpiredTokenKeepsEveryAnswer: a page left open longer than the token's life is drawn
// again with the answers and a notice; the page was shown long ago, so posting it again at
// once is accepted. The other rules still hold: the honeypot, and the new token is good once.
func TestExpiredTokenKeepsEveryAnswer(t *testing.T) {
	h := newHarness(t, noRateLimit)
	f := h.form(form.StatusPublished, lenientTiming(3),
		form.FieldSpec{Label: "Name", Type: "text", Required: true},
		form.FieldSpec{Label: "Topics", Type: "checkbox", Options: []string{"Go", "Rust"}},
		form.FieldSpec{Label: "When", Type: "date"})
	sent := formValues(h.get("/f/" + f.ID()).Body.String())
	name, topics, when := f.Fields()[0].ID, f.Fields()[1].ID, f.Fields()[2].ID
	sent[name], sent[topics], sent[when] = []string{"Ada"}, []string{"Go", "Rust"}, []string{"2026-03-14"}

	h.clock.Add(25 * time.Hour)
	rec := h.postForm("/f/"+f.ID(), sent)
	page := rec.Body.String()
	if rec.Code != 403 || !strings.Contains(page, "This page was open for a long time") || strings.Contains(page, "Files cannot be kept") {
		t.Fatalf("expired: %d %s", rec.Code, page)
	}
	if h.spam(f, web.ReasonTokenExpired) != 1 {
		t.Fatal("expired token not counted")
	}
	again := formValues(page)
	sameAnswers(t, f, again, sent)
	if strings.Contains(page, "data-wait=") {
		t.Error("the renewed page asks the script to wait")
	}

	// The honeypot still applies to the renewed page: a fake thank-you, nothing stored.
	bot := url.Values{}
	for k, v := range again {
		bot[k] = v
	}
	bot.Set("website", "http://spam.example")
	if rec := h.postForm("/f/"+f.ID(), bot); rec.Code != 200 || len(h.submissions(f)) != 0 || h.spam(f, web.ReasonHoneypot) != 1 {
		t.Fatalf("honeypot on the renewed page: %d", rec.Code)
	}
	// Posted again at once: accepted; the same token a second time is a replay.
	if rec := h.postForm("/f/"+f.ID(), again); rec.Code != 200 || !strings.Contains(rec.Body.String(), "Thank you") {
		t.Fatalf("post again: %d %s", rec.Code, rec.Body.String())
	}
	if rec := h.postForm("/f/"+f.ID(), again); rec.Code != 403 || h.spam(f, web.ReasonTokenReplay) != 1 || strings.Contains(rec.Body.String(), "Your answers are kept") {
		t.Fatalf("replay: %d %s", rec.Code, rec.Body.String())
	}
	if n := len(h.submissions(f)); n != 1 {
		t.Fatalf("%d stored", n)
	}
}

// TestTooFastOnTheLastPageOfSeveral: the final post of a multi-page form, refused for its
// timing, draws the page it came from (step 2 of 2) with its answers and those of page 1
// carried; posted again once the fill time has passed, everything is stored.
func TestTooFastOnTheLastPageOfSeveral(t *testing.T) {
	h := newHarness(t, noRateLimit)
	f := h.form(form.StatusPublished, lenientTiming(3),
		form.FieldSpec{Label: "Name", Type: "text", Required: true},
		form.FieldSpec{Label: "Campaign", Type: "text", Hidden: true},
		form.FieldSpec{Label: "Plan", Type: "radio", Options: []string{"Basic", "Pro"}, Required: true, Page: intp(2)},
		form.FieldSpec{Label: "Notes", Type: "textarea", Page: intp(2)})
	ids := map[string]string{}
	for _, fl := range f.Fields() {
		ids[fl.Key] = fl.ID
	}
	v := formValues(h.get("/f/" + f.ID() + "?campaign=autumn").Body.String())
	v.Set(ids["name"], "Ada")
	v.Set("_nav", "next")
	rec := h.postForm("/f/"+f.ID()+"/page", v)
	if rec.Code != 200 || progress(t, rec.Body.String()) != "2/2" {
		t.Fatalf("next: %d %s", rec.Code, rec.Body.String())
	}
	last := formValues(rec.Body.String())
	last.Set(ids["plan"], "Pro")
	last.Set(ids["notes"], "Call me <after> 5")

	h.clock.Add(time.Second)
	rec = h.postForm("/f/"+f.ID(), last)
	page := rec.Body.String()
	if rec.Code != 403 || progress(t, page) != "2/2" || !strings.Contains(page, "Your answers are kept") {
		t.Fatalf("too fast on page 2: %d %s", rec.Code, page)
	}
	again := formValues(page)
	sameAnswers(t, f, again, last)
	if again.Get("_page") != "2" || again.Get(ids["name"]) != "Ada" || again.Get(ids["campaign"]) != "autumn" {
		t.Fatalf("page 2 drawn again with %v", again)
	}

	h.clock.Add(2 * time.Second)
	if rec := h.postForm("/f/"+f.ID(), again); rec.Code != 200 {
		t.Fatalf("post again: %d %s", rec.Code, rec.Body.String())
	}
	subs := h.submissions(f)
	if len(subs) != 1 {
		t.Fatalf("%d stored", len(subs))
	}
	for key, want := range map[string]string{"name": "Ada", "campaign": "autumn", "plan": "Pro", "notes": "Call me <after> 5"} {
		if got := subs[0].Data()[ids[key]].String(); got != want {
			t.Errorf("stored %s = %q, want %q", key, got, want)
		}
	}
}

// TestTooFastWithProofOfWork: the page drawn again carries a new challenge bound to its new
// token; a solution of the old one does not pass, a solution of the new one does.
func TestTooFastWithProofOfWork(t *testing.T) {
	h := newHarness(t, noRateLimit)
	f := h.form(form.StatusPublished, guarded(), form.FieldSpec{Label: "Name", Type: "text", Required: true})
	name := f.Fields()[0].ID
	token, ch := h.page(f, "")
	solved, ok := web.Solve(*ch)
	if !ok {
		t.Fatal("challenge not solved")
	}
	h.clock.Add(time.Second)
	rec := h.postForm("/f/"+f.ID(), url.Values{"_token": {token}, "altcha": {solved}, name: {"Ada"}})
	page := rec.Body.String()
	if rec.Code != 403 || !strings.Contains(page, "Your answers are kept") || !strings.Contains(page, `value="Ada"`) {
		t.Fatalf("too fast: %d %s", rec.Code, page)
	}
	again := formValues(page)
	m := challengeRe.FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no challenge on the page drawn again")
	}
	var next web.Challenge
	if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &next); err != nil {
		t.Fatal(err)
	}
	h.clock.Add(3 * time.Second)
	again.Set("altcha", solved)
	if rec := h.postForm("/f/"+f.ID(), again); rec.Code != 403 || h.spam(f, web.ReasonPoWInvalid) != 1 {
		t.Fatalf("the old solution: %d", rec.Code)
	}
	fresh, ok := web.Solve(next)
	if !ok {
		t.Fatal("new challenge not solved")
	}
	again.Set("altcha", fresh)
	if rec := h.postForm("/f/"+f.ID(), again); rec.Code != 200 {
		t.Fatalf("the new solution: %d %s", rec.Code, rec.Body.String())
	}
}

// A script's JSON post gets the API's answer as before: 403 rejected, nothing drawn.
func TestTooFastJSONPostIsRejectedAsBefore(t *testing.T) {
	h := newHarness(t, noRateLimit)
	f := h.form(form.StatusPublished, lenientTiming(3), form.FieldSpec{Label: "Name", Type: "text"})
	token, _ := h.page(f, "")
	rec := h.postJSON(f, map[string]any{"token": token, "data": map[string]any{"name": "Ada"}})
	if code, _ := errorCode(t, rec); rec.Code != 403 || code != "rejected" || h.spam(f, web.ReasonTooFast) != 1 {
		t.Fatalf("%d %s", rec.Code, rec.Body.String())
	}
}
