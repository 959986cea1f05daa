package web_test

import (
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/formward/formward/domain/form"
)

func intp(n int) *int { return &n }

// threePageForm: the role on page 1 (with a hidden campaign field); the company on page 2,
// shown to employees only (and required then); the school on page 3, required.
func threePageForm(h *harness) (*form.Form, map[string]string) {
	f := h.form(form.StatusPublished, lenient(),
		form.FieldSpec{Label: "Role", Type: "radio", Options: []string{"Student", "Employee"}, Required: true},
		form.FieldSpec{Label: "Campaign", Type: "text", Hidden: true},
		form.FieldSpec{Label: "Company", Type: "text", Required: true, Page: intp(2),
			ShowIf: &form.ShowIfSpec{Match: "all", Conditions: []form.ConditionSpec{{FieldID: "role", Operator: "equals", Value: "Employee", HasValue: true}}}},
		form.FieldSpec{Label: "School", Type: "text", Required: true, Page: intp(3)},
	)
	ids := map[string]string{}
	for _, fl := range f.Fields() {
		ids[fl.Key] = fl.ID
	}
	return f, ids
}

var progressRe = regexp.MustCompile(`Step (\d) of (\d)`)

func progress(t *testing.T, page string) string {
	t.Helper()
	m := progressRe.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no progress indicator in %s", page)
	}
	return m[1] + "/" + m[2]
}

// hiddenInputs reads the carried answers of a page (name → values).
func hiddenInputs(page string) url.Values {
	out := url.Values{}
	for _, m := range regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`).FindAllStringSubmatch(page, -1) {
		out.Add(m[1], m[2])
	}
	return out
}

func TestPagesWithoutJavaScript(t *testing.T) {
	h := newHarness(t)
	f, ids := threePageForm(h)
	rec := h.get("/f/" + f.ID() + "?campaign=spring&utm_source=news")
	page := rec.Body.String()
	if rec.Code != 200 || progress(t, page) != "1/2" || !strings.Contains(page, `name="`+ids["campaign"]+`" value="spring"`) || strings.Contains(page, `id="f-`+ids["school"]+`"`) {
		t.Fatalf("first page: %d %s", rec.Code, page)
	}
	carried := hiddenInputs(page)
	// Next without the required role: the same page with its error, nothing lost.
	next := func(v url.Values) string {
		t.Helper()
		rec := h.postForm("/f/"+f.ID()+"/page", v)
		if rec.Code != 200 && rec.Code != 422 {
			t.Fatalf("next: %d %s", rec.Code, rec.Body.String())
		}
		return rec.Body.String()
	}
	v := url.Values{"_nav": {"next"}}
	for k, vs := range carried {
		v[k] = vs
	}
	page = next(v)
	if progress(t, page) != "1/2" || !strings.Contains(page, "Role: a value is required") || !strings.Contains(page, `value="spring"`) {
		t.Fatalf("page 1 again: %s", page)
	}
	// A student skips the company page: page 3 is step 2 of 2, role and campaign carried.
	v.Set(ids["role"], "Student")
	page = next(v)
	if progress(t, page) != "2/2" || !strings.Contains(page, `id="f-`+ids["school"]+`"`) || strings.Contains(page, `id="f-`+ids["company"]+`"`) {
		t.Fatalf("page 3: %s", page)
	}
	carried = hiddenInputs(page)
	if carried.Get(ids["role"]) != "Student" || carried.Get(ids["campaign"]) != "spring" || carried.Get("_page") != "3" {
		t.Fatalf("carried %v", carried)
	}
	// Back to page 1, the answer still chosen.
	back := url.Values{"_nav": {"back"}}
	for k, vs := range carried {
		back[k] = vs
	}
	page = next(back)
	if progress(t, page) != "1/2" || !regexp.MustCompile(`value="Student" checked`).MatchString(page) {
		t.Fatalf("back: %s", page)
	}
	// An employee gets the company page, which checks its required answer.
	v.Set(ids["role"], "Employee")
	page = next(v)
	if progress(t, page) != "2/3" || !strings.Contains(page, `id="f-`+ids["company"]+`"`) {
		t.Fatalf("page 2: %s", page)
	}
	emp := hiddenInputs(page)
	emp.Set("_nav", "next")
	if page = next(emp); progress(t, page) != "2/3" || !strings.Contains(page, "Company: a value is required") {
		t.Fatalf("company required: %s", page)
	}
	// The final post of a student who typed a company before switching: checked whole, the
	// skipped company dropped, the hidden campaign stored.
	v.Set(ids["role"], "Student")
	last := hiddenInputs(next(v))
	last.Set(ids["school"], "MIT")
	last.Set(ids["company"], "ACME")
	last.Del("_page")
	rec = h.postForm("/f/"+f.ID(), last)
	if rec.Code != 200 {
		t.Fatalf("final post: %d %s", rec.Code, rec.Body.String())
	}
	subs := h.submissions(f)
	if len(subs) != 1 {
		t.Fatalf("%d submissions", len(subs))
	}
	data := subs[0].Data()
	if data[ids["role"]].String() != "Student" || data[ids["school"]].String() != "MIT" || data[ids["campaign"]].String() != "spring" {
		t.Fatalf("data %v", data)
	}
	if _, ok := data[ids["company"]]; ok {
		t.Fatalf("the skipped company was stored: %v", data)
	}
}

// A field skipped by its rule is neither required nor stored, whatever the content type.
func TestSkippedFieldsOnEveryContentType(t *testing.T) {
	h := newHarness(t)
	f, ids := threePageForm(h)
	for _, kind := range []string{"urlencoded", "multipart", "json"} {
		token, _ := h.page(f, "")
		v := url.Values{"_token": {token}, ids["role"]: {"Student"}, ids["school"]: {"MIT"}, ids["company"]: {"ACME"}, ids["campaign"]: {"x"}}
		switch kind {
		case "urlencoded":
			if rec := h.postForm("/f/"+f.ID(), v); rec.Code != 200 {
				t.Fatalf("%s: %d %s", kind, rec.Code, rec.Body.String())
			}
		case "multipart":
			if rec := h.postMultipart(f, v); rec.Code != 200 {
				t.Fatalf("%s: %d %s", kind, rec.Code, rec.Body.String())
			}
		case "json":
			rec := h.postJSON(f, map[string]any{"token": token, "data": map[string]any{ids["role"]: "Student", ids["school"]: "MIT", ids["company"]: "ACME"}})
			if rec.Code != 201 {
				t.Fatalf("%s: %d %s", kind, rec.Code, rec.Body.String())
			}
		}
	}
	subs := h.submissions(f)
	if len(subs) != 3 {
		t.Fatalf("%d submissions", len(subs))
	}
	for _, s := range subs {
		if _, ok := s.Data()[ids["company"]]; ok {
			t.Fatalf("skipped company stored: %v", s.Data())
		}
	}
	// An employee must answer the company, on every content type.
	token, _ := h.page(f, "")
	if rec := h.postForm("/f/"+f.ID(), url.Values{"_token": {token}, ids["role"]: {"Employee"}, ids["school"]: {"MIT"}}); rec.Code != 422 || !strings.Contains(rec.Body.String(), "Company: a value is required") || progress(t, rec.Body.String()) != "2/3" {
		t.Fatalf("employee without company: %d %s", rec.Code, rec.Body.String())
	}
	rec := h.postJSON(f, map[string]any{"token": token, "data": map[string]any{ids["role"]: "Employee", ids["school"]: "MIT"}})
	if rec.Code != 422 || !strings.Contains(rec.Body.String(), ids["company"]) {
		t.Fatalf("json employee without company: %d %s", rec.Code, rec.Body.String())
	}
}

// The display rules reach the page's script as data attributes; prefill fills visible fields.
func TestRulesAndPrefillOnThePage(t *testing.T) {
	h := newHarness(t)
	f := h.form(form.StatusPublished, lenient(),
		form.FieldSpec{Label: "Plan", Type: "dropdown", Options: []string{"Free", "Pro"}},
		form.FieldSpec{Label: "Seats", Type: "number", ShowIf: &form.ShowIfSpec{Conditions: []form.ConditionSpec{{FieldID: "plan", Operator: "equals", Value: "Pro", HasValue: true}}}},
		form.FieldSpec{Label: "Topics", Type: "checkbox", Options: []string{"A", "B"}},
	)
	page := h.get("/f/" + f.ID()).Body.String()
	if !strings.Contains(page, `data-show-if="{&#34;any&#34;:false,&#34;c&#34;:[[&#34;`+f.Fields()[0].ID+`&#34;,&#34;equals&#34;,&#34;Pro&#34;,false]]}"`) || strings.Contains(page, "Step ") {
		t.Fatalf("rule not in the page: %s", page)
	}
	page = h.get("/f/" + f.ID() + "?plan=Pro&seats=3&topics=A&topics=B").Body.String()
	if !regexp.MustCompile(`<option value="Pro" selected>`).MatchString(page) || !strings.Contains(page, `value="3"`) ||
		!regexp.MustCompile(`value="A" checked`).MatchString(page) || !regexp.MustCompile(`value="B" checked`).MatchString(page) {
		t.Fatalf("prefill: %s", page)
	}
}
