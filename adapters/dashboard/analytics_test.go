package dashboard_test

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/formward/formward/adapters/analytics"
	"github.com/formward/formward/adapters/dashboard"
	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	"github.com/formward/formward/application"
	"github.com/formward/formward/application/capture"
	"github.com/formward/formward/application/forms"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
)

func pageNo(n int) *int { return &n }

var (
	optionBar = regexp.MustCompile(`<g class="hrow" data-option="([^"]+)" data-count="(\d+)">`)
	pageBar   = regexp.MustCompile(`<g class="hrow" data-page="([^"]+)" data-reached="(\d+)">`)
)

// TestAnalyticsPageAddsUp: the analytics page reads the counters kept at capture (written
// to storage when the page asks): submissions from the form and through the API apart, a bar
// and a table row per option of each choice question, a number question's min, median and
// max, and a multi-page form's reach per page with its drop-off.
func TestAnalyticsPageAddsUp(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		var activity *analytics.Counter
		h := newHarnessWith(t, db, "http://127.0.0.1:8080", httptest.NewUnstartedServer(nil), func(d *application.Deps, _ *dashboard.Options) {
			activity = analytics.New(d.Stats, zap.NewNop(), 24*time.Hour)
			d.Activity = activity
		})
		b := h.owner()
		ctx := workspaceCtx(t, db)
		fv, err := h.app.Commands.CreateForm.Handle(ctx, forms.CreateForm{Draft: form.Draft{Name: "Pizza order", Fields: []form.FieldSpec{
			{Label: "Size", Type: "radio", Options: []string{"Small", "Large"}, Required: true, Page: pageNo(1)},
			{Label: "Toppings", Type: "checkbox", Options: []string{"Olives", "Basil", "Chili"}, Page: pageNo(1)},
			{Label: "Slices", Type: "number", Page: pageNo(2)},
		}}})
		if err != nil {
			t.Fatal(err)
		}
		fs := fv.Form.Fields()
		id := fv.Form.ID()
		for _, data := range []map[string]submission.Input{
			{fs[0].ID: "Small", fs[1].ID: []string{"Olives", "Basil"}, fs[2].ID: "4"},
			{fs[0].ID: "Large", fs[1].ID: []string{"Basil"}, fs[2].ID: "8"},
			{fs[0].ID: "Large", fs[2].ID: "12"},
			{fs[0].ID: "Large", fs[2].ID: "7"},
		} {
			if _, err := h.app.Commands.CaptureSubmission.Handle(ctx, capture.CaptureSubmission{FormID: id, Source: submission.SourceAPI, Data: data}); err != nil {
				t.Fatal(err)
			}
		}
		// Three views; two visits start; one of them reaches page 2.
		now := time.Now()
		for range 3 {
			activity.Viewed(id, now)
		}
		for _, nonce := range []string{"visit-1", "visit-2"} {
			activity.Started(id, nonce, now)
			activity.Reached(id, nonce, 1, now)
		}
		activity.Reached(id, "visit-1", 2, now)
		activity.Reached(id, "visit-1", 2, now) // a page drawn again counts once per visit

		page := b.get("/app/forms/"+id+"/analytics").expect(t, http.StatusOK).body
		body := text(page)
		for _, want := range []string{"Views 3", "Starts 2", "Submissions 4 0 from the form · 4 through the API", "Completion rate 0.0%"} {
			if !strings.Contains(body, want) {
				t.Fatalf("the totals lack %q: %s", want, body)
			}
		}
		// From view to submission: shares of the views; API submissions are not part of it.
		for _, want := range []string{`data-step="Viewed the page" data-count="3"`, `data-step="Started to fill it in" data-count="2"`,
			`data-step="Submitted from the form" data-count="0"`, "2 · 66.7%"} {
			if !strings.Contains(page, want) {
				t.Fatalf("the funnel lacks %q: %s", want, body)
			}
		}
		var bars []string
		for _, m := range optionBar.FindAllStringSubmatch(page, -1) {
			bars = append(bars, m[1]+"="+m[2])
		}
		if got := strings.Join(bars, " "); got != "Small=1 Large=3 Olives=1 Basil=2 Chili=0" {
			t.Fatalf("option bars: %s", got)
		}
		// Shares are of those who answered the question: 2 answered Toppings.
		for _, want := range []string{"3 · 75%", "Basil</th><td class=\"num\">2</td><td class=\"num\">100%", "1 · 50%", "0 · 0%",
			`data-stat="min">4<`, `data-stat="median">7.5<`, `data-stat="max">12<`} {
			if !strings.Contains(page, want) {
				t.Fatalf("the page lacks %q: %s", want, body)
			}
		}
		var reach []string
		for _, m := range pageBar.FindAllStringSubmatch(page, -1) {
			reach = append(reach, m[1]+"="+m[2])
		}
		if got := strings.Join(reach, " "); got != "Page 1=2 Page 2=1" {
			t.Fatalf("pages reached: %s", got)
		}
		// Page 1 lost one of two; page 2 lost its one visitor (no submission from the form).
		if !strings.Contains(page, `<th scope="row">Page 1</th><td class="num">2</td><td class="num">100%</td><td class="num">1</td><td class="num">50%</td>`) ||
			!strings.Contains(page, `<th scope="row">Page 2</th><td class="num">1</td><td class="num">50%</td><td class="num">1</td><td class="num">100%</td>`) {
			t.Fatalf("the reach table: %s", body)
		}
		// Each chart is an image named by its heading and description, with its table.
		if n := strings.Count(page, `role="img" aria-labelledby="q`); n != 2 || strings.Count(page, "Show the numbers as a table") != 5 {
			t.Fatalf("%d question charts, %d tables", n, strings.Count(page, "Show the numbers as a table"))
		}

		// A single-page form has no reach per page.
		single, err := h.app.Commands.CreateForm.Handle(ctx, forms.CreateForm{Draft: form.Draft{Name: "One page", Fields: []form.FieldSpec{
			{Label: "Name", Type: "text"},
		}}})
		if err != nil {
			t.Fatal(err)
		}
		if p := b.get("/app/forms/"+single.Form.ID()+"/analytics").expect(t, http.StatusOK).body; strings.Contains(p, "Reach per page") ||
			!strings.Contains(text(p), "Name 0 answered: no submissions in this period yet") {
			t.Fatalf("single-page form: %s", text(p))
		}
	})
}
