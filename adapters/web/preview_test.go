package web_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/formward/formward/adapters/web"
	"github.com/formward/formward/domain/form"
)

const previewAction = "/app/forms/preview-of-it/preview"

// preview draws the preview of f for a post of v (nil: the first view).
func preview(t *testing.T, f *form.Form, v url.Values) (int, string) {
	t.Helper()
	var post *http.Request
	if v != nil {
		post = httptest.NewRequest(http.MethodPost, previewAction, strings.NewReader(v.Encode()))
		post.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	var buf bytes.Buffer
	status, err := web.Preview(&buf, f, previewAction, post)
	if err != nil {
		t.Fatal(err)
	}
	return status, buf.String()
}

// TestPreviewFollowsPagesAndRules: the preview of a draft steps through the pages its answers
// lead to (a student skips the company page), checks each page as the public page does, and
// thanks without storing; its buttons post to the preview, never to /f/{id}.
func TestPreviewFollowsPagesAndRules(t *testing.T) {
	h := newHarness(t)
	s := form.DefaultSettings()
	s.Spam.ProofOfWork, s.Spam.MinFillSeconds = true, 30
	f := h.form(form.StatusDraft, &s,
		form.FieldSpec{Label: "Role", Type: "radio", Options: []string{"Student", "Employee"}, Required: true},
		form.FieldSpec{Label: "Company", Type: "text", Required: true, Page: intp(2),
			ShowIf: &form.ShowIfSpec{Match: "all", Conditions: []form.ConditionSpec{{FieldID: "role", Operator: "equals", Value: "Employee", HasValue: true}}}},
		form.FieldSpec{Label: "School", Type: "text", Required: true, Page: intp(3)},
	)
	ids := map[string]string{}
	for _, fl := range f.Fields() {
		ids[fl.Key] = fl.ID
	}

	// Until the role is known the company page is skipped: two steps.
	status, page := preview(t, f, nil)
	if status != 200 || progress(t, page) != "1/2" || !strings.Contains(page, `action="`+previewAction+`"`) || strings.Contains(page, "/f/"+f.ID()) ||
		strings.Contains(page, "data-pow") || strings.Contains(page, "data-wait") {
		t.Fatalf("first view: %d %s", status, page)
	}
	// Next without the role: page 1 again with the error.
	status, page = preview(t, f, url.Values{"_nav": {"next"}, "_page": {"1"}})
	if status != 422 || progress(t, page) != "1/2" || !strings.Contains(page, "Role: a value is required") {
		t.Fatalf("next without the role: %d %s", status, page)
	}
	// A student goes from page 1 straight to the school (step 2 of 2).
	status, page = preview(t, f, url.Values{"_nav": {"next"}, "_page": {"1"}, ids["role"]: {"Student"}})
	if status != 200 || progress(t, page) != "2/2" || !strings.Contains(page, `id="f-`+ids["school"]+`"`) || strings.Contains(page, `id="f-`+ids["company"]+`"`) {
		t.Fatalf("a student's next page: %d %s", status, page)
	}
	// An employee gets the company page, which requires an answer.
	status, page = preview(t, f, url.Values{"_nav": {"next"}, "_page": {"1"}, ids["role"]: {"Employee"}})
	if status != 200 || progress(t, page) != "2/3" || !strings.Contains(page, `id="f-`+ids["company"]+`"`) {
		t.Fatalf("an employee's next page: %d %s", status, page)
	}
	status, page = preview(t, f, url.Values{"_nav": {"next"}, "_page": {"2"}, ids["role"]: {"Employee"}})
	if status != 422 || !strings.Contains(page, "Company: a value is required") {
		t.Fatalf("the company left empty: %d %s", status, page)
	}
	// Back from the school page of a student: page 1, the answer kept.
	status, page = preview(t, f, url.Values{"_nav": {"back"}, "_page": {"3"}, ids["role"]: {"Student"}})
	if status != 200 || progress(t, page) != "1/2" || !strings.Contains(page, `value="Student" checked`) {
		t.Fatalf("back: %d %s", status, page)
	}
	// The final post is checked whole: without the school, the school's page with its error.
	status, page = preview(t, f, url.Values{"_page": {"3"}, ids["role"]: {"Student"}})
	if status != 422 || !strings.Contains(page, "School: a value is required") || progress(t, page) != "2/2" {
		t.Fatalf("final post without the school: %d %s", status, page)
	}
	// Complete (the skipped company not asked for): the preview's thank-you.
	status, page = preview(t, f, url.Values{"_page": {"3"}, ids["role"]: {"Student"}, ids["school"]: {"Ada's school"}})
	if status != 200 || !strings.Contains(page, "Your response has been recorded.") || !strings.Contains(page, "This is a preview: nothing was sent or stored.") ||
		!strings.Contains(page, `href="`+previewAction+`"`) {
		t.Fatalf("final post: %d %s", status, page)
	}
	// A body the page never sends: refused with a message, and the way back to the preview.
	post := httptest.NewRequest(http.MethodPost, previewAction, strings.NewReader(`{"data":{}}`))
	post.Header.Set("Content-Type", "application/json")
	var buf bytes.Buffer
	if status, err := web.Preview(&buf, f, previewAction, post); err != nil || status != 400 || !strings.Contains(buf.String(), `href="`+previewAction+`"`) {
		t.Fatalf("a JSON post: %d %v %s", status, err, buf.String())
	}

	// A form that redirects: the preview says where a respondent would go, and stays put.
	r := form.DefaultSettings()
	to := "https://example.com/thanks"
	r.RedirectURL = &to
	g := h.form(form.StatusPublished, &r, form.FieldSpec{Label: "Name", Type: "text"})
	if status, page := preview(t, g, url.Values{}); status != 200 || !strings.Contains(page, "a respondent is taken to https://example.com/thanks.") {
		t.Fatalf("a redirecting form's preview: %d %s", status, page)
	}
}
