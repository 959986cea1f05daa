package dashboard_test

import (
	"bytes"
	"context"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"net/url"
	"reflect"
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
	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/application/capture"
	"github.com/formward/formward/application/forms"
	"github.com/formward/formward/domain/form"
)

// workspaceCtx acts in the harness's only workspace, for reading what the pages made.
func workspaceCtx(t *testing.T, db *persistence.DB) context.Context {
	t.Helper()
	ws, err := persistence.NewWorkspaceRepository(db).Oldest(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return auth.WithPrincipal(context.Background(), auth.SystemPrincipal(ws.ID()))
}

func formOf(t *testing.T, h *harness, ctx context.Context, id string) forms.FormView {
	t.Helper()
	fv, err := h.app.Queries.GetForm.Handle(ctx, forms.GetForm{ID: id})
	if err != nil {
		t.Fatal(err)
	}
	return fv
}

// TestFormsNewFromTemplates: "New form" offers a blank form and the five templates as radio
// cards; each template makes its form (its name when none is typed) and opens the builder;
// an unknown choice is refused on the choices, keeping the typed name.
func TestFormsNewFromTemplates(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		h := newHarness(t, db, "http://127.0.0.1:8080")
		b := h.owner()
		ctx := workspaceCtx(t, db)

		list := b.get("/app/forms").expect(t, http.StatusOK).body
		if !strings.Contains(list, `<input type="radio" id="start-blank" name="template" value="blank" checked>`) {
			t.Fatalf("the blank form is not the default choice: %s", list)
		}
		for _, tp := range form.Templates() {
			if !strings.Contains(list, `id="start-`+tp.ID+`" name="template" value="`+tp.ID+`">`) || !strings.Contains(list, tp.Summary) {
				t.Fatalf("no card for %s: %s", tp.ID, text(list))
			}
		}

		for _, tp := range form.Templates() {
			p := b.post("/app/forms", url.Values{"template": {tp.ID}, "name": {""}}).redirectsTo(t, "/app/forms/frm_")
			id := formPath.FindStringSubmatch(p.Header.Get("Location"))[1]
			ids, body := fieldsOf(t, b, id)
			d := tp.Draft("")
			if len(ids) != len(d.Fields) || !strings.Contains(body, "<h1>"+tp.Name) && !strings.Contains(body, tp.Name) {
				t.Fatalf("%s: %d fields, want %d: %s", tp.ID, len(ids), len(d.Fields), text(body))
			}
			for _, s := range d.Fields {
				if !strings.Contains(body, "<strong>"+s.Label+"</strong>") {
					t.Fatalf("%s: the builder lacks %q", tp.ID, s.Label)
				}
			}
			if f := formOf(t, h, ctx, id).Form; f.Name() != tp.Name || len(f.Fields()) != len(d.Fields) {
				t.Fatalf("%s: stored %q with %d fields", tp.ID, f.Name(), len(f.Fields()))
			}
		}

		// A typed name wins over the template's.
		p := b.post("/app/forms", url.Values{"template": {"feedback"}, "name": {"Quarterly survey"}}).redirectsTo(t, "/app/forms/frm_")
		if f := formOf(t, h, ctx, formPath.FindStringSubmatch(p.Header.Get("Location"))[1]).Form; f.Name() != "Quarterly survey" || len(f.Fields()) != 4 {
			t.Fatalf("named template form: %q, %d fields", f.Name(), len(f.Fields()))
		}
		// A blank form still needs its name; the choice is kept.
		p = b.post("/app/forms", url.Values{"template": {"blank"}, "name": {" "}}).expect(t, http.StatusUnprocessableEntity)
		if !regexp.MustCompile(`id="f-name-error">[^<]+</span>`).MatchString(p.body) || !strings.Contains(p.body, `value="blank" checked>`) {
			t.Fatalf("blank form without a name: %s", text(p.body))
		}
		// An unknown choice: the error on the choices, the name kept, nothing made.
		before, _, _ := h.app.Queries.ListForms.Handle(ctx, forms.ListForms{})
		p = b.post("/app/forms", url.Values{"template": {"survey"}, "name": {"My survey"}}).expect(t, http.StatusUnprocessableEntity)
		if !strings.Contains(p.body, `id="f-template-error">Choose a blank form or one of the templates.</span>`) ||
			!strings.Contains(p.body, `value="My survey"`) || !strings.Contains(p.body, `aria-describedby="f-template-error"`) {
			t.Fatalf("unknown template: %s", text(p.body))
		}
		if after, _, _ := h.app.Queries.ListForms.Handle(ctx, forms.ListForms{}); len(after) != len(before) {
			t.Fatalf("%d forms after a refused create, %d before", len(after), len(before))
		}
	})
}

// TestFormsDuplicateKeepsEverything: a copy has every field property (keys, pages, file
// rules, display rules pointing at the copy's own fields) and the settings of its original.
func TestFormsDuplicateKeepsEverything(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		h := newHarness(t, db, "http://127.0.0.1:8080")
		b := h.owner()
		ctx := workspaceCtx(t, db)
		for _, start := range []string{"job_application", "event_registration"} {
			p := b.post("/app/forms", url.Values{"template": {start}}).redirectsTo(t, "/app/forms/frm_")
			id := formPath.FindStringSubmatch(p.Header.Get("Location"))[1]
			b.post("/app/forms/"+id+"/settings", url.Values{"name": {"Original"}, "thank_you_message": {"Merci."}, "redirect_url": {"https://example.com/done"},
				"min_fill_seconds": {"7"}, "frame_ancestors": {"https://www.example.com"}}).redirectsTo(t, "/app/forms/"+id)
			dup := b.post("/app/forms/"+id+"/duplicate", nil).redirectsTo(t, "/app/forms/frm_")
			copyID := formPath.FindStringSubmatch(dup.Header.Get("Location"))[1]
			orig, cp := formOf(t, h, ctx, id).Form, formOf(t, h, ctx, copyID).Form
			if cp.Name() != "Copy of Original" || cp.Status() != form.StatusDraft || copyID == id {
				t.Fatalf("copy %s %q (%s)", copyID, cp.Name(), cp.Status())
			}
			if !reflect.DeepEqual(orig.Settings(), cp.Settings()) {
				t.Fatalf("settings differ:\n%+v\n%+v", orig.Settings(), cp.Settings())
			}
			of, cf := orig.Fields(), cp.Fields()
			if len(of) != len(cf) {
				t.Fatalf("%d fields copied of %d", len(cf), len(of))
			}
			rules := 0
			for i := range of {
				o, c := of[i], cf[i]
				if c.ID == o.ID {
					t.Fatalf("field %d kept its ID %s", i, o.ID)
				}
				if o.ShowIf != nil {
					rules++
					// The rule tests the copy's own field at the same place.
					at := -1
					for j := range of {
						if of[j].ID == o.ShowIf.Conditions[0].FieldID {
							at = j
						}
					}
					if c.ShowIf == nil || at < 0 || c.ShowIf.Conditions[0].FieldID != cf[at].ID {
						t.Fatalf("field %d: rule %+v, want one on %s", i, c.ShowIf, cf[at].ID)
					}
					if o.ShowIf.Any != c.ShowIf.Any || len(o.ShowIf.Conditions) != len(c.ShowIf.Conditions) || o.ShowIf.Conditions[0].Value != c.ShowIf.Conditions[0].Value || o.ShowIf.Conditions[0].Operator != c.ShowIf.Conditions[0].Operator {
						t.Fatalf("field %d: rule %+v, want %+v", i, c.ShowIf, o.ShowIf)
					}
				}
				o.ID, c.ID, o.ShowIf, c.ShowIf = "", "", nil, nil
				if !reflect.DeepEqual(o, c) {
					t.Fatalf("field %d:\n%+v\nwant\n%+v", i, c, o)
				}
			}
			if start == "event_registration" && rules != 2 {
				t.Fatalf("%d display rules copied, want 2", rules)
			}
			if start == "job_application" && !form.Paged(cf) {
				t.Fatal("the copy lost its pages")
			}
		}
	})
}

// TestFormsPreviewStepsThroughPages: the preview's buttons post to the preview, which checks
// each page as the public page does, follows the display rules and answers the final post
// with a thank-you that says nothing was sent; nothing is stored and no view or start is
// counted.
func TestFormsPreviewStepsThroughPages(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		var activity *analytics.Counter
		h := newHarnessWith(t, db, "http://127.0.0.1:8080", httptest.NewUnstartedServer(nil), func(d *application.Deps, _ *dashboard.Options) {
			activity = analytics.New(d.Stats, zap.NewNop(), 24*time.Hour)
			d.Activity = activity
		})
		b := h.owner()
		ctx := workspaceCtx(t, db)
		p := b.post("/app/forms", url.Values{"template": {"job_application"}}).redirectsTo(t, "/app/forms/frm_")
		id := formPath.FindStringSubmatch(p.Header.Get("Location"))[1]
		f := formOf(t, h, ctx, id).Form
		key := map[string]string{}
		for _, fl := range f.Fields() {
			key[fl.Key] = fl.ID
		}
		// One view of the real page is counted; the preview must add none.
		if err := h.app.Commands.RecordFormView.Handle(ctx, capture.RecordFormView{FormID: id}); err != nil {
			t.Fatal(err)
		}
		base := "/app/forms/" + id + "/preview"

		// The builder frames the preview, which may post forms; phone width by link.
		builder := b.get("/app/forms/"+id+"?preview=phone").expect(t, http.StatusOK).body
		if !strings.Contains(builder, `class="fb-preview-frame fb-preview-phone"`) || !strings.Contains(builder, `sandbox="allow-same-origin allow-scripts allow-forms"`) ||
			!regexp.MustCompile(`data-preview-width="phone" aria-current="true">Phone width`).MatchString(builder) {
			t.Fatalf("builder at phone width: %s", builder)
		}
		if full := b.get("/app/forms/"+id).expect(t, http.StatusOK).body; strings.Contains(full, "fb-preview-phone\"") ||
			!strings.Contains(full, `data-preview-width="full" aria-current="true">Full width`) {
			t.Fatalf("builder at full width: %s", full)
		}

		// Page 1, posting back to the preview, with no render token and no proof of work.
		first := b.get(base).expect(t, http.StatusOK)
		if !strings.Contains(first.body, `action="`+base+`"`) || !strings.Contains(first.body, `formaction="`+base+`"`) ||
			!strings.Contains(first.body, "Step 1 of 2") || !strings.Contains(first.body, `name="_token" value=""`) || strings.Contains(first.body, "data-wait") {
			t.Fatalf("first page: %s", first.body)
		}
		if csp := first.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'self'") || !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") {
			t.Fatalf("preview CSP %q", csp)
		}

		// Next with required answers missing: the page again, errors on their fields, what was
		// typed kept.
		p = b.post(base, url.Values{"_nav": {"next"}, "_page": {"1"}, key["email"]: {"ada@example.org"}}).expect(t, http.StatusUnprocessableEntity)
		if !strings.Contains(p.body, "Step 1 of 2") || !strings.Contains(p.body, `id="f-`+key["full_name"]+`-error"`) ||
			!strings.Contains(p.body, `id="f-`+key["position"]+`-error"`) || !strings.Contains(p.body, `value="ada@example.org"`) {
			t.Fatalf("page 1 with errors: %s", text(p.body))
		}
		// Next with page 1 answered: page 2, the answers carried on.
		page1 := url.Values{"_nav": {"next"}, "_page": {"1"}, key["full_name"]: {"Ada Lovelace"}, key["email"]: {"ada@example.org"}, key["position"]: {"Engineering"}}
		p = b.post(base, page1).expect(t, http.StatusOK)
		if !strings.Contains(p.body, "Step 2 of 2") || !strings.Contains(p.body, `id="f-`+key["cv"]+`"`) ||
			!strings.Contains(p.body, `<input type="hidden" name="`+key["full_name"]+`" value="Ada Lovelace">`) || !strings.Contains(p.body, ">Submit</button>") {
			t.Fatalf("page 2: %s", text(p.body))
		}
		// Back: page 1 with the answers.
		back := url.Values{"_nav": {"back"}, "_page": {"2"}, key["full_name"]: {"Ada Lovelace"}}
		if p = b.post(base, back).expect(t, http.StatusOK); !strings.Contains(p.body, "Step 1 of 2") || !strings.Contains(p.body, `value="Ada Lovelace"`) {
			t.Fatalf("back: %s", text(p.body))
		}

		// The final post without the required CV: page 2 with the error.
		answers := map[string]string{"_page": "2", key["full_name"]: "Ada Lovelace", key["email"]: "ada@example.org", key["position"]: "Engineering"}
		p = multipartPost(t, b, base, answers, nil)
		if p.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(p.body, "Step 2 of 2") || !strings.Contains(p.body, `id="f-`+key["cv"]+`-error"`) {
			t.Fatalf("final post without the CV: %d %s", p.StatusCode, text(p.body))
		}
		// A CV of a type the field does not accept is refused as on the real page.
		p = multipartPost(t, b, base, answers, map[string][3]string{key["cv"]: {"cv.png", "image/png", "\x89PNG\r\n\x1a\n0000"}})
		if p.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(p.body, `id="f-`+key["cv"]+`-error"`) || !strings.Contains(p.body, "Files cannot be kept") {
			t.Fatalf("final post with a PNG CV: %d %s", p.StatusCode, text(p.body))
		}
		// With a PDF: the thank-you, saying nothing was sent.
		p = multipartPost(t, b, base, answers, map[string][3]string{key["cv"]: {"cv.pdf", "application/pdf", "%PDF-1.4\n%âãÏÓ\n1 0 obj\n"}})
		if p.StatusCode != http.StatusOK || !strings.Contains(p.body, "Thank you for applying.") || !strings.Contains(p.body, "This is a preview: nothing was sent or stored.") ||
			!strings.Contains(p.body, `href="`+base+`"`) {
			t.Fatalf("final post: %d %s", p.StatusCode, text(p.body))
		}

		// Nothing stored, nothing counted.
		if fv := formOf(t, h, ctx, id); fv.SubmissionCount != 0 {
			t.Fatalf("%d submissions after the preview", fv.SubmissionCount)
		}
		report, err := h.app.Queries.GetFormStats.Handle(ctx, capture.GetFormStats{FormID: id, Days: 1})
		if err != nil {
			t.Fatal(err)
		}
		if report.Views != 1 || report.Starts != 0 || report.Submissions != 0 {
			t.Fatalf("stats after the preview: %d views, %d starts, %d submissions; want the one view recorded", report.Views, report.Starts, report.Submissions)
		}

		// Display rules: the dietary questions count only for dinner guests.
		p = b.post("/app/forms", url.Values{"template": {"event_registration"}}).redirectsTo(t, "/app/forms/frm_")
		ev := formOf(t, h, ctx, formPath.FindStringSubmatch(p.Header.Get("Location"))[1]).Form
		for _, fl := range ev.Fields() {
			key[fl.Key] = fl.ID
		}
		evBase := "/app/forms/" + ev.ID() + "/preview"
		if pv := b.get(evBase).expect(t, http.StatusOK).body; !strings.Contains(pv, `id="field-`+key["dietary_needs"]+`" data-show-if=`) {
			t.Fatalf("no display rule on the dietary needs: %s", pv)
		}
		answered := url.Values{key["full_name"]: {"Ada"}, key["email"]: {"ada@example.org"}, key["ticket"]: {"Standard"}, key["consent"]: {"true"},
			key["dietary_needs"]: {"Not on the list"}}
		answered.Set(key["attending_dinner"], "Yes")
		p = b.post(evBase, answered).expect(t, http.StatusUnprocessableEntity)
		if !strings.Contains(p.body, `id="f-`+key["dietary_needs"]+`-error"`) {
			t.Fatalf("a dinner guest's bad dietary answer was not refused: %s", text(p.body))
		}
		answered.Set(key["attending_dinner"], "No")
		if p = b.post(evBase, answered).expect(t, http.StatusOK); !strings.Contains(p.body, "This is a preview") {
			t.Fatalf("a skipped question was checked: %s", text(p.body))
		}
		if fv := formOf(t, h, ctx, ev.ID()); fv.SubmissionCount != 0 {
			t.Fatalf("%d submissions after the preview", fv.SubmissionCount)
		}
	})
}

// multipartPost sends fields and files (field → name, content type, content) as the page's
// final post does.
func multipartPost(t *testing.T, b *browser, path string, fields map[string]string, files map[string][3]string) page {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, v := range fields {
		_ = mw.WriteField(k, v)
	}
	for field, f := range files {
		hd := textproto.MIMEHeader{}
		hd.Set("Content-Disposition", `form-data; name="`+field+`"; filename="`+f[0]+`"`)
		hd.Set("Content-Type", f[1])
		w, err := mw.CreatePart(hd)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.WriteString(w, f[2])
	}
	_ = mw.Close()
	req, err := http.NewRequest(http.MethodPost, b.h.server.URL+path, &body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := b.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return page{Response: resp, body: string(raw)}
}
