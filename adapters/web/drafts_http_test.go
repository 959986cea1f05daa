package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	stdhtml "html"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	"github.com/formward/formward/application/capture"
	"github.com/formward/formward/application/forms"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
)

// savingForm is a three-page form that keeps drafts for ttl days.
func savingForm(h *harness, ttl int) (*form.Form, map[string]string) {
	s := lenient()
	s.Partial = form.Partial{Enabled: true, TTLDays: ttl}
	f := h.form(form.StatusPublished, s,
		form.FieldSpec{Label: "Name", Type: "text", Required: true},
		form.FieldSpec{Label: "Email", Type: "email", Required: true},
		form.FieldSpec{Label: "Colour", Type: "radio", Options: []string{"Red", "Blue"}, Required: true, Page: intp(2)},
		form.FieldSpec{Label: "Comments", Type: "textarea", Page: intp(3)},
	)
	ids := map[string]string{}
	for _, fl := range f.Fields() {
		ids[fl.Key] = fl.ID
	}
	return f, ids
}

var (
	resumeInputRe = regexp.MustCompile(`name="_resume" value="([^"]*)"`)
	resumeLinkRe  = regexp.MustCompile(`/f/[a-z]+_[A-Za-z0-9]+\?resume=(drf_[A-Za-z0-9]+\.[A-Za-z0-9_-]+)`)
)

// carried reads a page's hidden inputs, unescaped, as a browser posts them back.
func carried(page string) url.Values {
	out := url.Values{}
	for k, vs := range hiddenInputs(page) {
		for _, v := range vs {
			out.Add(k, stdhtml.UnescapeString(v))
		}
	}
	return out
}

func resumeOf(t *testing.T, page string) string {
	t.Helper()
	m := resumeInputRe.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no _resume input in %s", page)
	}
	return m[1]
}

// TestSaveAndResumeWithoutJavaScript walks a respondent through a form that keeps drafts, as a
// browser without JavaScript posts it: page 1, save for later, the resume link in a fresh
// visit, the last page, submit; then the link says it was used. Both databases.
func TestSaveAndResumeWithoutJavaScript(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		h := newHarnessOn(t, db, nil, submission.FileLimits{}, zap.NewNop())
		f, ids := savingForm(h, 30)
		rec := h.get("/f/" + f.ID())
		page := rec.Body.String()
		if rec.Code != 200 || !strings.Contains(page, "Save and continue later") || resumeOf(t, page) != "" {
			t.Fatalf("first page: %d %s", rec.Code, page)
		}
		token := stdhtml.UnescapeString(tokenRe.FindStringSubmatch(page)[1])

		// Next: page 1's answers go to a new draft; its token comes back in the page.
		v := url.Values{"_token": {token}, "_page": {"1"}, "_nav": {"next"}, "_resume": {""},
			ids["name"]: {"Ada <Lovelace>"}, ids["email"]: {"Ada@Example.org"}}
		rec = h.postForm("/f/"+f.ID()+"/page", v)
		page = rec.Body.String()
		resume := resumeOf(t, page)
		if rec.Code != 200 || progress(t, page) != "2/3" || !strings.HasPrefix(resume, "drf_") {
			t.Fatalf("page 2: %d resume %q %s", rec.Code, resume, page)
		}

		// Save and continue later on page 2 (Blue chosen, nothing checked): the link shows.
		v = carried(page)
		v.Set("_nav", "save")
		v.Set(ids["colour"], "Blue")
		rec = h.postForm("/f/"+f.ID()+"/page", v)
		page = rec.Body.String()
		m := resumeLinkRe.FindStringSubmatch(page)
		if rec.Code != 200 || m == nil || m[1] != resume || !strings.Contains(page, "Your answers are saved") {
			t.Fatalf("saved page: %d %s", rec.Code, page)
		}
		if strings.Contains(page, "Email me the link") {
			t.Fatal("a server without mail offers to email the link")
		}

		// At rest: no answer, no address, no secret in the clear.
		type rawRow struct{ SecretHash, Answers []byte }
		var raw []rawRow
		rows, err := db.SQL().Query("SELECT secret_hash, answers FROM drafts")
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var r rawRow
			if err := rows.Scan(&r.SecretHash, &r.Answers); err != nil {
				t.Fatal(err)
			}
			raw = append(raw, r)
		}
		_ = rows.Close()
		secret := resume[strings.Index(resume, ".")+1:]
		for _, r := range raw {
			for _, plain := range []string{"Ada", "Lovelace", "example.org", "Blue", secret} {
				if bytes.Contains(r.Answers, []byte(plain)) || bytes.Contains(r.SecretHash, []byte(plain)) {
					t.Fatalf("draft row holds %q in the clear", plain)
				}
			}
		}
		if len(raw) != 1 {
			t.Fatalf("%d draft rows, want 1 (the visit kept to its draft)", len(raw))
		}

		// A fresh visit through the link: page 2 with every answer, Blue chosen.
		h.clock.Add(time.Hour)
		rec = h.get("/f/" + f.ID() + "?resume=" + url.QueryEscape(resume))
		page = rec.Body.String()
		if rec.Code != 200 || progress(t, page) != "2/3" || resumeOf(t, page) != resume || !strings.Contains(page, "Welcome back") ||
			!regexp.MustCompile(`value="Blue" checked`).MatchString(page) || carried(page).Get(ids["name"]) != "Ada <Lovelace>" {
			t.Fatalf("resumed page: %d %s", rec.Code, page)
		}

		// Forged, truncated, another form's: each explained, the form below, nothing shown.
		other, _ := savingForm(h, 30)
		forged := resume[:len(resume)-2] + "AA"
		if resume[len(resume)-2:] == "AA" {
			forged = resume[:len(resume)-2] + "BB"
		}
		for _, c := range []struct {
			path, want string
			status     int
		}{
			{"/f/" + f.ID() + "?resume=" + forged, "not valid", 404},
			{"/f/" + f.ID() + "?resume=drf_nothing", "not valid", 404},
			{"/f/" + other.ID() + "?resume=" + resume, "another form", 404},
		} {
			rec := h.get(c.path)
			page := rec.Body.String()
			if rec.Code != c.status || !strings.Contains(page, c.want) || strings.Contains(page, "Lovelace") || progress(t, page) != "1/3" {
				t.Fatalf("%s: %d %s", c.path, rec.Code, page)
			}
		}

		// Next to page 3 and Submit: stored, and the draft is over.
		v = carried(page)
		v.Set(ids["colour"], "Blue") // checked on the page: the browser sends it
		v.Set("_nav", "next")
		rec = h.postForm("/f/"+f.ID()+"/page", v)
		page = rec.Body.String()
		if rec.Code != 200 || progress(t, page) != "3/3" || resumeOf(t, page) != resume {
			t.Fatalf("page 3: %d %s", rec.Code, page)
		}
		v = carried(page)
		v.Set(ids["comments"], "See you")
		rec = h.postForm("/f/"+f.ID(), v)
		if rec.Code != 200 || !strings.Contains(rec.Body.String(), "Thank you") {
			t.Fatalf("submit: %d %s", rec.Code, rec.Body.String())
		}
		subs := h.submissions(f)
		if len(subs) != 1 || subs[0].Data()[ids["colour"]].String() != "Blue" || subs[0].Data()[ids["name"]].String() != "Ada <Lovelace>" {
			t.Fatalf("submissions: %v", subs)
		}
		rec = h.get("/f/" + f.ID() + "?resume=" + url.QueryEscape(resume))
		if rec.Code != 410 || !strings.Contains(rec.Body.String(), "already used") || strings.Contains(rec.Body.String(), "Lovelace") {
			t.Fatalf("used link: %d %s", rec.Code, rec.Body.String())
		}
		var answers []byte
		if err := db.SQL().QueryRow("SELECT answers FROM drafts").Scan(&answers); err != nil || len(answers) != 0 {
			t.Fatalf("a submitted draft keeps its answers: %v %d bytes", err, len(answers))
		}
		drafts, _, err := h.app.Queries.ListDrafts.Handle(h.owner(context.Background()), capture.ListDrafts{FormID: f.ID(), Page: portsPage()})
		if err != nil || len(drafts) != 0 {
			t.Fatalf("open drafts after submit: %v %v", drafts, err)
		}
	})
}

// TestDraftsExpireAndAreErased: a draft past its form's ttl_days answers "expired" and the
// retention sweep deletes it; a draft holding an address goes with a privacy erase of it.
func TestDraftsExpireAndAreErased(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		h := newHarnessOn(t, db, nil, submission.FileLimits{}, zap.NewNop())
		f, ids := savingForm(h, 2)
		start := func(email string) string {
			token, _ := h.page(f, "")
			rec := h.postForm("/f/"+f.ID()+"/page", url.Values{"_token": {token}, "_page": {"1"}, "_nav": {"next"},
				ids["name"]: {"Grace"}, ids["email"]: {email}})
			return resumeOf(t, rec.Body.String())
		}
		old := start("grace@example.org")
		h.clock.Add(36 * time.Hour)
		kept := start("alan@example.org")
		h.clock.Add(13 * time.Hour) // old is 49 hours past its last save: over 2 days
		drafts, _, err := h.app.Queries.ListDrafts.Handle(h.owner(context.Background()), capture.ListDrafts{FormID: f.ID(), Page: portsPage()})
		if err != nil || len(drafts) != 2 || drafts[0].Page() != 2 || len(drafts[0].Answers()) != 0 {
			t.Fatalf("drafts listed: %v %v", drafts, err)
		}
		rec := h.get("/f/" + f.ID() + "?resume=" + url.QueryEscape(old))
		if rec.Code != 410 || !strings.Contains(rec.Body.String(), "expired") || strings.Contains(rec.Body.String(), "Grace") {
			t.Fatalf("expired link: %d %s", rec.Code, rec.Body.String())
		}
		repo := persistence.NewDraftRepository(db, persistencetest.Cipher(), persistencetest.BlindIndex())
		n, err := capture.SweepDrafts(context.Background(), repo, h.clock.Now())
		if err != nil || n != 1 {
			t.Fatalf("sweep: %d %v", n, err)
		}
		if rec := h.get("/f/" + f.ID() + "?resume=" + url.QueryEscape(kept)); rec.Code != 200 {
			t.Fatalf("kept draft: %d", rec.Code)
		}
		n, err = repo.DeleteByEmail(context.Background(), h.ws, persistencetest.BlindIndex().Email(h.ws, "alan@example.org"))
		if err != nil || n != 1 {
			t.Fatalf("erase: %d %v", n, err)
		}
		if rec := h.get("/f/" + f.ID() + "?resume=" + url.QueryEscape(kept)); rec.Code != 404 {
			t.Fatalf("erased draft: %d", rec.Code)
		}
	})
}

// TestDraftScriptSave: the page script's background save needs the page's render token to
// start a draft, then keeps to it; a form without drafts refuses.
func TestDraftScriptSave(t *testing.T) {
	h := newHarness(t)
	f, ids := savingForm(h, 30)
	token, _ := h.page(f, "")
	if rec := h.postForm("/f/"+f.ID()+"/draft", url.Values{"_token": {"forged"}, ids["name"]: {"Ada"}}); rec.Code != 422 {
		t.Fatalf("draft without a token: %d %s", rec.Code, rec.Body.String())
	}
	save := func(v url.Values) string {
		t.Helper()
		rec := h.postForm("/f/"+f.ID()+"/draft", v)
		var out struct {
			Resume    string `json:"resume"`
			ResumeURL string `json:"resume_url"`
		}
		if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &out) != nil || !strings.Contains(out.ResumeURL, "?resume="+out.Resume) {
			t.Fatalf("draft: %d %s", rec.Code, rec.Body.String())
		}
		return out.Resume
	}
	first := save(url.Values{"_token": {token}, "_page": {"1"}, ids["name"]: {"Ad"}})
	if again := save(url.Values{"_token": {token}, "_page": {"1"}, "_resume": {first}, ids["name"]: {"Ada"}}); again != first {
		t.Fatalf("a second save started another draft: %s %s", again, first)
	}
	rec := h.get("/f/" + f.ID() + "?resume=" + url.QueryEscape(first))
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `value="Ada"`) {
		t.Fatalf("resumed: %d %s", rec.Code, rec.Body.String())
	}
	plain := h.form(form.StatusPublished, lenient(), form.FieldSpec{Label: "Name", Type: "text"})
	token, _ = h.page(plain, "")
	if rec := h.postForm("/f/"+plain.ID()+"/draft", url.Values{"_token": {token}}); rec.Code != 422 {
		t.Fatalf("draft of a form without drafts: %d %s", rec.Code, rec.Body.String())
	}
	if page := h.get("/f/" + plain.ID()).Body.String(); strings.Contains(page, "_resume") || strings.Contains(page, "Save and continue") {
		t.Fatal("a form without drafts offers to save")
	}
}

// TestSaveAndResumeInTheRespondentsLanguage: on a form with languages, the saved page, the
// resumed page and a dead link's notice speak the language the respondent used.
func TestSaveAndResumeInTheRespondentsLanguage(t *testing.T) {
	h := newHarness(t)
	f, ids := multilingualForm(h)
	s := f.Settings()
	s.Partial = form.Partial{Enabled: true, TTLDays: 30}
	if _, err := h.app.Commands.UpdateForm.Handle(h.owner(context.Background()), forms.UpdateForm{ID: f.ID(), Patch: form.Patch{Settings: &s}}); err != nil {
		t.Fatal(err)
	}
	page := h.getWith("/f/"+f.ID(), "Accept-Language", "de-DE,de;q=0.9")
	if !strings.Contains(page, "Speichern und später fortfahren") {
		t.Fatalf("no German save button: %s", page)
	}
	v := carried(page)
	v.Set(ids["colour"], "Red")
	v.Set("_nav", "save")
	rec := h.postForm("/f/"+f.ID()+"/page", v, "Accept-Language", "de-DE")
	saved := rec.Body.String()
	m := resumeLinkRe.FindStringSubmatch(saved)
	if rec.Code != 200 || m == nil || !strings.Contains(saved, "Ihre Antworten sind gespeichert") || !strings.Contains(saved, `lang="de"`) {
		t.Fatalf("saved page: %d %s", rec.Code, saved)
	}
	// Resumed in a browser that asks for English: the draft's German wins.
	resumed := h.getWith("/f/"+f.ID()+"?resume="+url.QueryEscape(m[1]), "Accept-Language", "en")
	if !strings.Contains(resumed, "Willkommen zurück") || !regexp.MustCompile(`value="Red" checked`).MatchString(resumed) {
		t.Fatalf("resumed page: %s", resumed)
	}
	req := httptest.NewRequest("GET", "/f/"+f.ID()+"?resume=drf_x.y&lang=fr", nil)
	req.Header.Set("Accept-Language", "de")
	if dead := h.do(req); dead.Code != 404 || !strings.Contains(dead.Body.String(), "Ce lien de reprise") {
		t.Fatalf("a dead link in French: %d %s", dead.Code, dead.Body.String())
	}
}
