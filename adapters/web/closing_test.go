package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	"github.com/formward/formward/adapters/web"
	"github.com/formward/formward/application/capture"
	"github.com/formward/formward/application/forms"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
)

// contentTypes post the same values as a browser without script (urlencoded), a browser with
// a file field (multipart) and a script (JSON).
var contentTypes = []string{"urlencoded", "multipart", "json"}

// postAs sends values to f in one of contentTypes, with extra headers.
func (h *harness) postAs(f *form.Form, kind string, values map[string]string, headers ...string) *httptest.ResponseRecorder {
	h.t.Helper()
	var r *http.Request
	switch kind {
	case "urlencoded":
		v := url.Values{}
		for k, x := range values {
			v.Set(k, x)
		}
		r = httptest.NewRequest("POST", "/f/"+f.ID(), strings.NewReader(v.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	case "multipart":
		var buf bytes.Buffer
		w := multipart.NewWriter(&buf)
		for k, x := range values {
			_ = w.WriteField(k, x)
		}
		_ = w.Close()
		r = httptest.NewRequest("POST", "/f/"+f.ID(), &buf)
		r.Header.Set("Content-Type", w.FormDataContentType())
	case "json":
		data := map[string]string{}
		body := map[string]any{"data": data}
		for k, x := range values {
			if strings.HasPrefix(k, "_") || k == "website" {
				body[strings.TrimPrefix(k, "_")] = x
				continue
			}
			data[k] = x
		}
		b, _ := json.Marshal(body)
		r = httptest.NewRequest("POST", "/f/"+f.ID(), bytes.NewReader(b))
		r.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		r.Header.Set(headers[i], headers[i+1])
	}
	return h.do(r)
}

func noRateLimit(o *web.Options) { o.RateLimit = -1 }

func closingSettings(c form.Closing) *form.Settings {
	s := lenient()
	s.Closing = c
	return s
}

// apiCapture stores a submission through the API's use case.
func (h *harness) apiCapture(f *form.Form, data map[string]submission.Input) error {
	_, err := h.app.Commands.CaptureSubmission.Handle(h.owner(context.Background()), capture.CaptureSubmission{
		FormID: f.ID(), Data: data, Source: submission.SourceAPI})
	return err
}

func errorCode(t *testing.T, rec *httptest.ResponseRecorder) (string, []map[string]string) {
	t.Helper()
	var out struct {
		Error struct {
			Code    string              `json:"code"`
			Details []map[string]string `json:"details"`
		} `json:"error"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatalf("not an error body: %s", rec.Body.String())
	}
	return out.Error.Code, out.Error.Details
}

func TestClosedFormsOnEveryContentType(t *testing.T) {
	h := newHarness(t, noRateLimit)
	past := h.clock.Now().Add(-time.Minute)
	one := int64(1)
	msg := "Registration closed on Friday. See you next year!"
	byTime := h.form(form.StatusPublished, closingSettings(form.Closing{ClosesAt: &past, Message: &msg}), form.FieldSpec{Label: "Name", Type: "text"})
	byLimit := h.form(form.StatusPublished, closingSettings(form.Closing{MaxSubmissions: &one}), form.FieldSpec{Label: "Name", Type: "text"})
	noErr(t, h.apiCapture(byLimit, map[string]submission.Input{byLimit.Fields()[0].ID: "first"}))

	for _, f := range []*form.Form{byTime, byLimit} {
		// The page of a closed form is a page like any other (200); only posts are refused.
		rec := h.get("/f/" + f.ID())
		if rec.Code != 200 || !strings.Contains(rec.Body.String(), "This form is closed") || strings.Contains(rec.Body.String(), `name="_token"`) {
			t.Fatalf("GET closed form: %d %s", rec.Code, rec.Body.String())
		}
		for _, kind := range contentTypes {
			rec := h.postAs(f, kind, map[string]string{f.Fields()[0].ID: "Ada"})
			if rec.Code != 409 {
				t.Fatalf("%s post to a closed form: %d %s", kind, rec.Code, rec.Body.String())
			}
			if kind == "json" {
				if code, _ := errorCode(t, rec); code != "form_closed" {
					t.Fatalf("json code %q", code)
				}
			} else if !strings.Contains(rec.Body.String(), "This form is closed") {
				t.Fatalf("%s: no closed page: %s", kind, rec.Body.String())
			}
		}
	}
	// The owner's message shows on the page and after a post.
	if b := bodyOf(h.get("/f/" + byTime.ID())); !strings.Contains(b, "Registration closed on Friday.") {
		t.Fatalf("closed page lacks the owner's message: %s", b)
	}
	if b := bodyOf(h.postAs(byTime, "urlencoded", nil)); !strings.Contains(b, "Registration closed on Friday.") {
		t.Fatalf("closed post lacks the owner's message: %s", b)
	}
	// API submissions are not refused by closing rules.
	noErr(t, h.apiCapture(byTime, map[string]submission.Input{byTime.Fields()[0].ID: "via API"}))
	noErr(t, h.apiCapture(byLimit, map[string]submission.Input{byLimit.Fields()[0].ID: "via API"}))
	if n := len(h.submissions(byLimit)); n != 2 {
		t.Fatalf("%d stored", n)
	}

	// Before closes_at the form is open.
	future := h.clock.Now().Add(time.Hour)
	open := h.form(form.StatusPublished, closingSettings(form.Closing{ClosesAt: &future}), form.FieldSpec{Label: "Name", Type: "text"})
	for _, kind := range contentTypes {
		if rec := h.postAs(open, kind, map[string]string{open.Fields()[0].ID: "Ada"}); rec.Code != 200 && rec.Code != 201 {
			t.Fatalf("%s post before closes_at: %d %s", kind, rec.Code, rec.Body.String())
		}
	}
	h.clock.Add(2 * time.Hour)
	if rec := h.postAs(open, "urlencoded", map[string]string{open.Fields()[0].ID: "Ada"}); rec.Code != 409 {
		t.Fatalf("post after closes_at: %d", rec.Code)
	}
}

func TestMaxSubmissionsLastSlotOnEveryContentType(t *testing.T) {
	for _, kind := range contentTypes {
		t.Run(kind, func(t *testing.T) {
			h := newHarness(t, noRateLimit)
			two := int64(2)
			f := h.form(form.StatusPublished, closingSettings(form.Closing{MaxSubmissions: &two}), form.FieldSpec{Label: "Name", Type: "text"})
			for i, want := range []int{200, 200, 409} {
				rec := h.postAs(f, kind, map[string]string{f.Fields()[0].ID: "Ada"})
				if kind == "json" && want == 200 {
					want = 201
				}
				if rec.Code != want {
					t.Fatalf("post %d: %d, want %d: %s", i, rec.Code, want, rec.Body.String())
				}
			}
			if n := len(h.submissions(f)); n != 2 {
				t.Fatalf("%d stored", n)
			}
		})
	}
}

// Sixty-four respondents post at once to a form that takes ten: exactly ten are stored, on
// SQLite and on PostgreSQL (several group committers writing at once).
func TestMaxSubmissionsUnder64ConcurrentPosts(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		h := newHarnessOn(t, db, nil, submission.FileLimits{}, zap.NewNop(), noRateLimit)
		ten := int64(10)
		f := h.form(form.StatusPublished, closingSettings(form.Closing{MaxSubmissions: &ten}), form.FieldSpec{Label: "Name", Type: "text"})
		const n = 64
		codes := make([]int, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				codes[i] = h.postAs(f, contentTypes[i%3], map[string]string{f.Fields()[0].ID: fmt.Sprintf("respondent %d", i)}).Code
			}()
		}
		close(start)
		wg.Wait()
		ok, closed := 0, 0
		for _, c := range codes {
			switch c {
			case 200, 201:
				ok++
			case 409:
				closed++
			default:
				t.Fatalf("unexpected status %d", c)
			}
		}
		if ok != 10 || closed != n-10 {
			t.Fatalf("%d accepted, %d closed; want 10 and %d", ok, closed, n-10)
		}
		if got := len(h.submissions(f)); got != 10 {
			t.Fatalf("%d stored, want 10", got)
		}
		v, err := h.app.Queries.GetForm.Handle(h.owner(context.Background()), forms.GetForm{ID: f.ID()})
		noErr(t, err)
		if v.SubmissionCount != 10 || v.Form.ClosedReason(h.clock.Now(), v.SubmissionCount) != form.ClosedByLimit {
			t.Fatalf("count %d, closed by %q", v.SubmissionCount, v.Form.ClosedReason(h.clock.Now(), v.SubmissionCount))
		}
	})
}

func TestOneResponsePerEmailOnEveryContentType(t *testing.T) {
	for _, kind := range contentTypes {
		t.Run(kind, func(t *testing.T) {
			h := newHarness(t, noRateLimit)
			s := lenient()
			f := h.form(form.StatusDraft, s, form.FieldSpec{Label: "Name", Type: "text"}, form.FieldSpec{Label: "Email", Type: "email"})
			mail := f.Fields()[1].ID
			s.Closing.OnePerEmailField = &mail
			pub := "published"
			v, err := h.app.Commands.UpdateForm.Handle(h.owner(context.Background()), forms.UpdateForm{ID: f.ID(), Patch: form.Patch{Settings: s, Status: &pub}})
			noErr(t, err)
			f = v.Form
			name := f.Fields()[0].ID

			if rec := h.postAs(f, kind, map[string]string{name: "Ada", mail: "ada@example.com"}); rec.Code != 200 && rec.Code != 201 {
				t.Fatalf("first: %d %s", rec.Code, rec.Body.String())
			}
			// The same address, in other case and with spaces: refused on the email field.
			rec := h.postAs(f, kind, map[string]string{name: "Ada again", mail: " ADA@Example.com "})
			if rec.Code != 422 {
				t.Fatalf("second: %d %s", rec.Code, rec.Body.String())
			}
			if kind == "json" {
				code, details := errorCode(t, rec)
				if code != "validation_failed" || len(details) != 1 || details[0]["field"] != mail || details[0]["code"] != "already_submitted" {
					t.Fatalf("json answer: %s", rec.Body.String())
				}
			} else if b := rec.Body.String(); !strings.Contains(b, "already received") || !strings.Contains(b, "Ada again") {
				t.Fatalf("page: no error next to the field, or the typed values lost: %s", b)
			}
			// Another address, and no address (an optional field), are fine.
			for _, addr := range []string{"bob@example.com", ""} {
				if rec := h.postAs(f, kind, map[string]string{name: "Bob", mail: addr}); rec.Code != 200 && rec.Code != 201 {
					t.Fatalf("%q: %d %s", addr, rec.Code, rec.Body.String())
				}
			}
			if n := len(h.submissions(f)); n != 3 {
				t.Fatalf("%d stored", n)
			}
			// The address is not stored in clear outside the sealed submission.
			var keys int
			noErr(t, h.db.SQL().QueryRow("SELECT COUNT(*) FROM form_email_keys WHERE email_key LIKE '%example%'").Scan(&keys))
			if keys != 0 {
				t.Fatal("an email address stored in clear")
			}
		})
	}
}

func noErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func bodyOf(rec *httptest.ResponseRecorder) string { return rec.Body.String() }
