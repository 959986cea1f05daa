package application_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/formward/formward/application/apptest"
	"github.com/formward/formward/domain/audit"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/formward/formward/application/accounts"
	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/application/capture"
	"github.com/formward/formward/application/forms"
	workspaceapp "github.com/formward/formward/application/workspace"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/apikey"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/domain/workspace"
	"github.com/formward/formward/ports"
)

// ctx acts as an admin key of workspace wsp_a: the use cases read who acts from the context.
var ctx = apptest.As("wsp_a", apikey.ScopeAdmin)

func TestCreateForm(t *testing.T) {
	h := apptest.New()
	f := h.CreateForm(t, "wsp_a",
		form.FieldSpec{Label: "Name", Type: "text", Required: true},
		form.FieldSpec{Label: "Email", Type: "email"})
	if f.Status() != form.StatusDraft {
		t.Errorf("status = %q", f.Status())
	}
	if !strings.HasPrefix(f.ID(), ports.PrefixForm+"_") {
		t.Errorf("form ID = %q", f.ID())
	}
	for _, fl := range f.Fields() {
		if !strings.HasPrefix(fl.ID, ports.PrefixField+"_") {
			t.Errorf("field ID = %q", fl.ID)
		}
	}
	if !f.CreatedAt().Equal(apptest.Now) {
		t.Errorf("createdAt = %v", f.CreatedAt())
	}
	if len(h.Forms.Items) != 1 || len(h.Forms.Events) != 0 {
		t.Fatalf("stored %d forms, %d events", len(h.Forms.Items), len(h.Forms.Events))
	}
	if _, err := h.App.Queries.GetForm.Handle(ctx, forms.GetForm{ID: f.ID()}); err != nil {
		t.Fatalf("GetForm: %v", err)
	}

	_, err := h.App.Commands.CreateForm.Handle(ctx, forms.CreateForm{
		Draft: form.Draft{Name: " ", Fields: []form.FieldSpec{{Label: "x", Type: "radio"}}}})
	var ve *domain.ValidationError
	if !errors.As(err, &ve) || len(ve.Violations) != 2 {
		t.Fatalf("invalid draft: %v", err)
	}
	if len(h.Forms.Items) != 1 {
		t.Fatal("invalid form stored")
	}
}

func TestUpdateFormPublishedEvents(t *testing.T) {
	h := apptest.New()
	f := h.CreateForm(t, "wsp_a", form.FieldSpec{Label: "Name", Type: "text"})

	steps := []struct {
		status    string
		wantEvent bool
	}{
		{"draft", false},     // draft → draft
		{"published", true},  // draft → published
		{"published", false}, // published → published
		{"archived", false},  // published → archived
		{"published", true},  // archived → published
		{"draft", false},     // published → draft
		{"archived", false},  // draft → archived
		{"draft", false},     // archived → draft
	}
	for i, st := range steps {
		h.Clock.At = apptest.Now.Add(time.Duration(i+1) * time.Minute)
		before := len(h.Forms.Events)
		got := h.SetStatus(t, "wsp_a", f.ID(), st.status)
		if string(got.Status()) != st.status || !got.UpdatedAt().Equal(h.Clock.At) {
			t.Fatalf("step %d: status %q updatedAt %v", i, got.Status(), got.UpdatedAt())
		}
		added := h.Forms.Events[before:]
		if !st.wantEvent {
			if len(added) != 0 {
				t.Fatalf("step %d (→%s): unexpected events %+v", i, st.status, added)
			}
			continue
		}
		if len(added) != 1 {
			t.Fatalf("step %d (→%s): %d events, want exactly one", i, st.status, len(added))
		}
		e := added[0]
		if e.Type != event.FormPublished || e.FormID != f.ID() || e.WorkspaceID != "wsp_a" || !strings.HasPrefix(e.ID, ports.PrefixEvent+"_") {
			t.Fatalf("event = %+v", e)
		}
		want := map[string]any{"name": "Contact", "published_at": domain.FormatTime(h.Clock.At)}
		if !reflect.DeepEqual(e.Data, want) || !e.OccurredAt.Equal(h.Clock.At) {
			t.Fatalf("event data = %v at %v, want %v", e.Data, e.OccurredAt, want)
		}
	}
	if n := len(h.Forms.Events); n != 2 {
		t.Fatalf("total form.published events = %d, want 2", n)
	}
}

func TestUpdateFormPublishWithRenameUsesNewName(t *testing.T) {
	h := apptest.New()
	f := h.CreateForm(t, "wsp_a")
	_, err := h.App.Commands.UpdateForm.Handle(ctx, forms.UpdateForm{ID: f.ID(),
		Patch: form.Patch{Name: apptest.Ptr("Signup"), Status: apptest.Ptr("published")}})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Forms.Events) != 1 || h.Forms.Events[0].Data["name"] != "Signup" {
		t.Fatalf("events = %+v", h.Forms.Events)
	}
}

func TestUpdateFormFailures(t *testing.T) {
	h := apptest.New()
	f := h.CreateForm(t, "wsp_a", form.FieldSpec{Label: "Name", Type: "text"})
	fieldID := f.Fields()[0].ID

	// Invalid patch: nothing stored, no event, even though it would publish.
	_, err := h.App.Commands.UpdateForm.Handle(ctx, forms.UpdateForm{ID: f.ID(),
		Patch: form.Patch{Status: apptest.Ptr("published"), Fields: &[]form.FieldSpec{{ID: "fld_foreign", Label: "x", Type: "text"}}}})
	var ve *domain.ValidationError
	if !errors.As(err, &ve) || ve.Violations[0].Field != "fields[0].id" {
		t.Fatalf("err = %v, want a violation at fields[0].id", err)
	}
	if len(h.Forms.Events) != 0 {
		t.Fatal("event emitted for a rejected patch")
	}
	got, _ := h.App.Queries.GetForm.Handle(ctx, forms.GetForm{ID: f.ID()})
	if got.Form.Status() != form.StatusDraft || got.Form.Fields()[0].ID != fieldID {
		t.Fatalf("form changed: %q %v", got.Form.Status(), got.Form.Fields())
	}

	// Another workspace's form is not found.
	_, err = h.App.Commands.UpdateForm.Handle(apptest.As("wsp_b", apikey.ScopeAdmin), forms.UpdateForm{ID: f.ID(),
		Patch: form.Patch{Status: apptest.Ptr("published")}})
	if !errors.Is(err, domain.ErrNotFound) || len(h.Forms.Events) != 0 {
		t.Fatalf("err = %v, events = %d", err, len(h.Forms.Events))
	}
	if _, err := h.App.Queries.GetForm.Handle(apptest.As("wsp_b", apikey.ScopeAdmin), forms.GetForm{ID: f.ID()}); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("GetForm from another workspace: %v", err)
	}
}

// storeSubmissions stores n submissions of the form, which the form's count then holds.
func storeSubmissions(t *testing.T, h *apptest.Harness, f *form.Form, n int) {
	t.Helper()
	for range n {
		s, err := submission.New(h.IDs.New(ports.PrefixSubmission), f, nil, submission.Metadata{Source: submission.SourceAPI}, apptest.Now)
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Submissions.Add(context.Background(), s, event.Event{}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestUpdateFormReturnsCount(t *testing.T) {
	h := apptest.New()
	f := h.CreateForm(t, "wsp_a")
	storeSubmissions(t, h, f, 7)
	v, err := h.App.Commands.UpdateForm.Handle(ctx, forms.UpdateForm{ID: f.ID(), Patch: form.Patch{Name: apptest.Ptr("N")}})
	if err != nil || v.SubmissionCount != 7 || v.Form.Name() != "N" {
		t.Fatalf("view = %+v, %v", v, err)
	}
}

func captureFields() []form.FieldSpec {
	return []form.FieldSpec{
		{Label: "Name", Type: "text", Required: true},
		{Label: "Age", Type: "number"},
	}
}

func TestCaptureSubmission(t *testing.T) {
	h := apptest.New()
	f := h.CreateForm(t, "wsp_a", captureFields()...)
	h.SetStatus(t, "wsp_a", f.ID(), "published")
	nameID, ageID := f.Fields()[0].ID, f.Fields()[1].ID
	ip := "203.0.113.7"
	ua, ref := "Mozilla/5.0", "https://example.com/landing"

	s, err := h.App.Commands.CaptureSubmission.Handle(ctx, capture.CaptureSubmission{
		FormID: f.ID(), Source: submission.SourceForm,
		Data: map[string]submission.Input{nameID: "Jane", ageID: submission.Number("4.0")},
		IP:   ip, UserAgent: &ua, Referrer: &ref,
		UTM: map[string]string{
			"utm_source": "newsletter", "utm_medium": "email", "utm_campaign": "spring",
			"utm_term": "forms", "utm_content": "button", "utm_id": "x", "gclid": "abc", "fbclid": "def", "ref": "z",
		},
	})
	if err != nil {
		t.Fatalf("CaptureSubmission: %v", err)
	}
	if !strings.HasPrefix(s.ID(), ports.PrefixSubmission+"_") || s.FormID() != f.ID() || s.WorkspaceID() != "wsp_a" {
		t.Errorf("submission ids = %q %q %q", s.ID(), s.FormID(), s.WorkspaceID())
	}
	if !s.SubmittedAt().Equal(apptest.Now) {
		t.Errorf("submittedAt = %v", s.SubmittedAt())
	}
	if got := s.Data(); got[nameID].String() != "Jane" || got[ageID].String() != "4" {
		t.Errorf("data = %v", got)
	}

	// IP: hashed through the port, raw IP nowhere in the stored record.
	if !reflect.DeepEqual(h.IPHasher.Calls(), []string{ip}) {
		t.Errorf("hasher calls = %v", h.IPHasher.Calls())
	}
	if len(h.Submissions.Items) != 1 {
		t.Fatalf("stored %d submissions", len(h.Submissions.Items))
	}
	stored := h.Submissions.Items[0]
	m := stored.Metadata()
	if m.IPHash == nil || *m.IPHash != h.IPHasher.Hash(ip) {
		t.Errorf("ip hash = %v", m.IPHash)
	}
	if dump := fmt.Sprintf("%+v %+v %v", m, stored.Data(), *m.IPHash); strings.Contains(dump, ip) {
		t.Errorf("raw IP stored: %s", dump)
	}
	if m.Source != submission.SourceForm || m.UserAgent == nil || *m.UserAgent != ua || m.Referrer == nil || *m.Referrer != ref {
		t.Errorf("metadata = %+v", m)
	}
	wantUTM := map[string]string{"utm_source": "newsletter", "utm_medium": "email", "utm_campaign": "spring",
		"utm_term": "forms", "utm_content": "button"}
	if !reflect.DeepEqual(m.UTM, wantUTM) {
		t.Errorf("utm = %v, want %v", m.UTM, wantUTM)
	}

	// One submission.created event, stored with the submission.
	if len(h.Submissions.Events) != 1 {
		t.Fatalf("events = %d", len(h.Submissions.Events))
	}
	e := h.Submissions.Events[0]
	if e.Type != event.SubmissionCreated || e.FormID != f.ID() || e.Data["submission_id"] != s.ID() {
		t.Errorf("event = %+v", e)
	}
}

func TestCaptureSubmissionUTM(t *testing.T) {
	tests := []struct {
		name string
		in   map[string]string
		want map[string]string
	}{
		{"none", nil, nil},
		{"only foreign keys", map[string]string{"gclid": "x", "UTM_SOURCE": "y"}, map[string]string{}},
		{"empty values dropped", map[string]string{"utm_source": "", "utm_term": "t"}, map[string]string{"utm_term": "t"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := apptest.New()
			f := h.CreateForm(t, "wsp_a", captureFields()...)
			_, err := h.App.Commands.CaptureSubmission.Handle(ctx, capture.CaptureSubmission{
				FormID: f.ID(), Source: submission.SourceAPI,
				Data: map[string]submission.Input{f.Fields()[0].ID: "x"}, UTM: tt.in,
			})
			if err != nil {
				t.Fatal(err)
			}
			got := h.Submissions.Items[0].Metadata().UTM
			if len(got) != len(tt.want) || (len(tt.want) > 0 && !reflect.DeepEqual(got, tt.want)) {
				t.Fatalf("utm = %v, want %v", got, tt.want)
			}
			for k := range got {
				if !strings.HasPrefix(k, "utm_") {
					t.Fatalf("foreign key kept: %s", k)
				}
			}
		})
	}
}

func TestCaptureSubmissionAPIWithoutIP(t *testing.T) {
	h := apptest.New()
	f := h.CreateForm(t, "wsp_a", captureFields()...) // draft: the API accepts it
	s, err := h.App.Commands.CaptureSubmission.Handle(ctx, capture.CaptureSubmission{
		FormID: f.ID(), Source: submission.SourceAPI,
		Data: map[string]submission.Input{f.Fields()[0].ID: "x"},
	})
	if err != nil {
		t.Fatalf("API submission on a draft form: %v", err)
	}
	if m := s.Metadata(); m.IPHash != nil || m.UserAgent != nil || m.Referrer != nil || m.Source != submission.SourceAPI {
		t.Fatalf("metadata = %+v", m)
	}
	if len(h.IPHasher.Calls()) != 0 {
		t.Fatalf("hasher called for an empty IP: %v", h.IPHasher.Calls())
	}
}

func TestCaptureSubmissionErrors(t *testing.T) {
	h := apptest.New()
	draft := h.CreateForm(t, "wsp_a", captureFields()...)
	archived := h.CreateForm(t, "wsp_a", captureFields()...)
	h.SetStatus(t, "wsp_a", archived.ID(), "archived")
	published := h.CreateForm(t, "wsp_a", captureFields()...)
	h.SetStatus(t, "wsp_a", published.ID(), "published")
	nameID := published.Fields()[0].ID

	// The validation error is returned unchanged: the same violations Validate reports.
	bad := map[string]submission.Input{"fld_unknown": "x", published.Fields()[1].ID: "abc"}
	_, wantErr := submission.Validate(published.Fields(), bad)
	_, err := h.App.Commands.CaptureSubmission.Handle(ctx, capture.CaptureSubmission{
		FormID: published.ID(), Source: submission.SourceForm, Data: bad, IP: "198.51.100.1",
	})
	var ve, wantVE *domain.ValidationError
	if !errors.As(err, &ve) || !errors.As(wantErr, &wantVE) {
		t.Fatalf("err = %T %v", err, err)
	}
	if _, isVE := err.(*domain.ValidationError); !isVE {
		t.Errorf("validation error was wrapped: %T", err)
	}
	if !reflect.DeepEqual(ve.Violations, wantVE.Violations) {
		t.Errorf("violations = %+v, want %+v", ve.Violations, wantVE.Violations)
	}

	tests := []struct {
		name   string
		ws, id string
		source submission.Source
		want   error
	}{
		{"other workspace", "wsp_b", published.ID(), submission.SourceAPI, domain.ErrNotFound},
		{"unknown form", "wsp_a", "frm_nope", submission.SourceAPI, domain.ErrNotFound},
		{"api on archived", "wsp_a", archived.ID(), submission.SourceAPI, domain.ErrFormClosed},
		{"public on archived", "wsp_a", archived.ID(), submission.SourceForm, domain.ErrFormClosed},
		{"public on draft", "wsp_a", draft.ID(), submission.SourceForm, domain.ErrFormClosed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := h.App.Commands.CaptureSubmission.Handle(apptest.As(tt.ws, apikey.ScopeAdmin), capture.CaptureSubmission{
				FormID: tt.id, Source: tt.source, Data: map[string]submission.Input{nameID: "x"},
			})
			if !errors.Is(err, tt.want) || s != nil {
				t.Fatalf("Handle = %v, %v; want %v", s, err, tt.want)
			}
		})
	}
	if len(h.Submissions.Items) != 0 || len(h.Submissions.Events) != 0 {
		t.Fatalf("stored %d submissions, %d events after failures", len(h.Submissions.Items), len(h.Submissions.Events))
	}
}

func TestUpdateSubmission(t *testing.T) {
	h := apptest.New()
	f := h.CreateForm(t, "wsp_a", captureFields()...)
	nameID, ageID := f.Fields()[0].ID, f.Fields()[1].ID
	s, err := h.App.Commands.CaptureSubmission.Handle(ctx, capture.CaptureSubmission{
		FormID: f.ID(), Source: submission.SourceAPI,
		Data: map[string]submission.Input{nameID: "Jane", ageID: "30"},
	})
	if err != nil {
		t.Fatal(err)
	}
	h.Clock.At = apptest.Now.Add(time.Hour)
	got, err := h.App.Commands.UpdateSubmission.Handle(ctx, capture.UpdateSubmission{
		FormID: f.ID(), ID: s.ID(), Changes: map[string]submission.Input{ageID: nil},
	})
	if err != nil {
		t.Fatalf("UpdateSubmission: %v", err)
	}
	if _, ok := got.Data()[ageID]; ok || got.Data()[nameID].String() != "Jane" || !got.UpdatedAt().Equal(h.Clock.At) {
		t.Fatalf("data = %v updatedAt = %v", got.Data(), got.UpdatedAt())
	}
	if n := len(h.Submissions.Events); n != 2 || h.Submissions.Events[1].Type != event.SubmissionUpdated {
		t.Fatalf("events = %+v", h.Submissions.Events)
	}

	_, err = h.App.Commands.UpdateSubmission.Handle(ctx, capture.UpdateSubmission{
		FormID: f.ID(), ID: s.ID(), Changes: map[string]submission.Input{nameID: ""},
	})
	var ve *domain.ValidationError
	if !errors.As(err, &ve) || ve.Violations[0].Code != "required" || len(h.Submissions.Events) != 2 {
		t.Fatalf("clearing a required value: %v (events %d)", err, len(h.Submissions.Events))
	}
	_, err = h.App.Commands.UpdateSubmission.Handle(apptest.As("wsp_b", apikey.ScopeAdmin), capture.UpdateSubmission{
		FormID: f.ID(), ID: s.ID(), Changes: map[string]submission.Input{nameID: "x"},
	})
	if !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("other workspace: %v", err)
	}
}

func TestAuthenticate(t *testing.T) {
	h := apptest.New()
	ws, err := h.App.Commands.CreateWorkspace.Handle(ctx, workspaceapp.CreateWorkspace{Name: "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	admin := apptest.As(ws.ID(), apikey.ScopeAdmin)
	created, err := h.App.Commands.CreateAPIKey.Handle(admin, accounts.CreateAPIKey{Name: "CI", Scope: "read-write"})
	if err != nil {
		t.Fatal(err)
	}
	revoked, err := h.App.Commands.CreateAPIKey.Handle(admin, accounts.CreateAPIKey{Name: "old", Scope: "admin"})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.App.Commands.RevokeAPIKey.Handle(admin, accounts.RevokeAPIKey{ID: revoked.Key.ID()}); err != nil {
		t.Fatal(err)
	}
	if created.Key.CreatedBy() != (audit.Actor{Type: audit.ActorAPIKey, ID: "key_test", Name: "test key"}) {
		t.Errorf("created by %+v", created.Key.CreatedBy())
	}

	// The token is shown once; only the hash of its secret is stored.
	id, secret, err := apikey.ParseToken(created.Token)
	if err != nil || id != created.Key.ID() {
		t.Fatalf("token %q: %q %v", created.Token, id, err)
	}
	if string(h.Keys.Items[id].SecretHash()) != string(apikey.HashSecret(secret)) || strings.Contains(string(h.Keys.Items[id].SecretHash()), secret) {
		t.Fatal("stored key does not hold the hash of its secret")
	}

	p, err := h.App.Queries.Authenticate.Handle(ctx, accounts.Authenticate{Token: created.Token})
	if err != nil {
		t.Fatalf("valid token: %v", err)
	}
	if p != (auth.Principal{KeyID: id, WorkspaceID: ws.ID(), Scope: apikey.ScopeReadWrite, Actor: audit.Actor{Type: audit.ActorAPIKey, ID: id, Name: "CI"}}) {
		t.Fatalf("principal = %+v", p)
	}
	// last_used_at is written on the first use, then at most once a minute.
	if _, err := h.App.Queries.Authenticate.Handle(ctx, accounts.Authenticate{Token: created.Token}); err != nil {
		t.Fatal(err)
	}
	if len(h.Keys.Used) != 1 || !h.Keys.Used[0].Equal(apptest.Now) {
		t.Fatalf("marked used %v, want once at %v", h.Keys.Used, apptest.Now)
	}
	h.Clock.At = apptest.Now.Add(apikey.LastUsedEvery)
	if _, err := h.App.Queries.Authenticate.Handle(ctx, accounts.Authenticate{Token: created.Token}); err != nil {
		t.Fatal(err)
	}
	if len(h.Keys.Used) != 2 {
		t.Fatalf("marked used %v, want a second time a minute later", h.Keys.Used)
	}

	last := "A"
	if strings.HasSuffix(secret, "A") {
		last = "B"
	}
	wrongSecret := secret[:len(secret)-1] + last
	tests := []struct{ name, token string }{
		{"empty", ""},
		{"malformed", "not-a-key"},
		{"bearer prefix kept", "Bearer " + created.Token},
		{"short secret", apikey.FormatToken(id, "short")},
		{"unknown key", apikey.FormatToken("key_9999", secret)},
		{"wrong secret", apikey.FormatToken(id, wrongSecret)},
		{"other key's secret", apikey.FormatToken(id, strings.Split(revoked.Token, ".")[1])},
		{"revoked", revoked.Token},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := h.App.Queries.Authenticate.Handle(ctx, accounts.Authenticate{Token: tt.token})
			if !errors.Is(err, auth.ErrUnauthenticated) || p != (auth.Principal{}) {
				t.Fatalf("Authenticate(%q) = %+v, %v", tt.token, p, err)
			}
		})
	}

	// A storage failure is not reported as a bad key.
	h.Keys.GetErr = errors.New("db down")
	if _, err := h.App.Queries.Authenticate.Handle(ctx, accounts.Authenticate{Token: created.Token}); err == nil || errors.Is(err, auth.ErrUnauthenticated) {
		t.Fatalf("storage failure: %v", err)
	}
}

func TestCreateAPIKeyErrors(t *testing.T) {
	h := apptest.New()
	_, err := h.App.Commands.CreateAPIKey.Handle(apptest.As("wsp_nope", apikey.ScopeAdmin), accounts.CreateAPIKey{Name: "k", Scope: "admin"})
	var ve *domain.ValidationError
	if !errors.As(err, &ve) || ve.Violations[0].Field != "workspace_id" {
		t.Fatalf("unknown workspace: %v", err)
	}
	ws, _ := h.App.Commands.CreateWorkspace.Handle(ctx, workspaceapp.CreateWorkspace{Name: "Acme"})
	admin := apptest.As(ws.ID(), apikey.ScopeAdmin)
	if _, err := h.App.Commands.CreateAPIKey.Handle(admin, accounts.CreateAPIKey{Name: "k", Scope: "root"}); !errors.As(err, &ve) {
		t.Fatalf("bad scope: %v", err)
	}
	if _, err := h.App.Commands.CreateAPIKey.Handle(admin, accounts.CreateAPIKey{Name: " ", Scope: "admin"}); !errors.As(err, &ve) {
		t.Fatalf("empty name: %v", err)
	}
	if len(h.Keys.Items) != 0 {
		t.Fatalf("stored %d keys", len(h.Keys.Items))
	}
}

func TestWorkspaces(t *testing.T) {
	h := apptest.New()
	w, err := h.App.Commands.EnsureDefaultWorkspace.Handle(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if w.Name() != workspace.DefaultName || w.Plan() != workspace.PlanBusiness {
		t.Fatalf("default workspace = %q %q", w.Name(), w.Plan())
	}
	again, err := h.App.Commands.EnsureDefaultWorkspace.Handle(ctx)
	if err != nil || again.ID() != w.ID() || len(h.Workspaces.Items) != 1 {
		t.Fatalf("second call = %v, %v (%d workspaces)", again, err, len(h.Workspaces.Items))
	}
	free, err := h.App.Commands.CreateWorkspace.Handle(ctx, workspaceapp.CreateWorkspace{Name: "Hosted", Plan: workspace.PlanFree})
	if err != nil || free.Plan() != workspace.PlanFree {
		t.Fatalf("CreateWorkspace = %v, %v", free, err)
	}
	if _, err := h.App.Commands.CreateWorkspace.Handle(ctx, workspaceapp.CreateWorkspace{Name: "X", Plan: "gold"}); err == nil {
		t.Fatal("bad plan accepted")
	}
}

func TestListFormsHasMore(t *testing.T) {
	tests := []struct {
		stored, limit int
		wantN         int
		wantMore      bool
	}{
		{0, 20, 0, false},
		{3, 2, 2, true},
		{3, 3, 3, false},
		{4, 3, 3, true},
		{1, 1, 1, false},
		{2, 1, 1, true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d stored, limit %d", tt.stored, tt.limit), func(t *testing.T) {
			h := apptest.New()
			var ids []string
			for i := 0; i < tt.stored; i++ {
				ids = append(ids, h.CreateForm(t, "wsp_a").ID())
			}
			h.CreateForm(t, "wsp_other") // never listed
			if len(ids) > 0 {
				storeSubmissions(t, h, h.Forms.Items[len(ids)-1], 5)
			}
			views, more, err := h.App.Queries.ListForms.Handle(ctx, forms.ListForms{Page: ports.Page{Limit: tt.limit}})
			if err != nil {
				t.Fatal(err)
			}
			if len(views) != tt.wantN || more != tt.wantMore {
				t.Fatalf("got %d forms, more=%v; want %d, %v", len(views), more, tt.wantN, tt.wantMore)
			}
			if len(h.Forms.ListPages) != 1 || h.Forms.ListPages[0].Limit != tt.limit+1 {
				t.Fatalf("repository asked for %+v, want limit %d", h.Forms.ListPages, tt.limit+1)
			}
			for i, v := range views {
				if v.Form.WorkspaceID() != "wsp_a" {
					t.Fatalf("listed another workspace's form")
				}
				if want := ids[len(ids)-1-i]; v.Form.ID() != want {
					t.Fatalf("item %d = %s, want %s (newest first)", i, v.Form.ID(), want)
				}
			}
			if len(views) > 0 && views[0].SubmissionCount != 5 {
				t.Fatalf("submission count = %d", views[0].SubmissionCount)
			}
		})
	}
}

func TestListFormsPassesStatusAndCursor(t *testing.T) {
	h := apptest.New()
	a := h.CreateForm(t, "wsp_a")
	h.CreateForm(t, "wsp_a")
	h.SetStatus(t, "wsp_a", a.ID(), "published")
	pos := &ports.Position{CreatedAt: apptest.Now, ID: "frm_x"}
	st := form.StatusPublished
	views, more, err := h.App.Queries.ListForms.Handle(ctx, forms.ListForms{Status: &st,
		Page: ports.Page{Limit: 10, After: pos}})
	if err != nil || more || len(views) != 1 || views[0].Form.ID() != a.ID() {
		t.Fatalf("views = %v more = %v err = %v", views, more, err)
	}
	if h.Forms.ListPages[0].After != pos {
		t.Fatal("cursor position not passed on")
	}
}

func TestListSubmissionsHasMore(t *testing.T) {
	tests := []struct {
		stored, limit int
		wantN         int
		wantMore      bool
	}{
		{0, 20, 0, false},
		{5, 2, 2, true},
		{5, 5, 5, false},
		{6, 5, 5, true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d stored, limit %d", tt.stored, tt.limit), func(t *testing.T) {
			h := apptest.New()
			f := h.CreateForm(t, "wsp_a", captureFields()...)
			for i := 0; i < tt.stored; i++ {
				if _, err := h.App.Commands.CaptureSubmission.Handle(ctx, capture.CaptureSubmission{
					FormID: f.ID(), Source: submission.SourceAPI,
					Data: map[string]submission.Input{f.Fields()[0].ID: fmt.Sprint(i)},
				}); err != nil {
					t.Fatal(err)
				}
			}
			after := apptest.Now.Add(-time.Hour)
			before := apptest.Now.Add(time.Hour)
			subs, more, err := h.App.Queries.ListSubmissions.Handle(ctx, capture.ListSubmissions{
				FormID: f.ID(), Page: ports.Page{Limit: tt.limit},
				CreatedAfter: &after, CreatedBefore: &before,
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(subs) != tt.wantN || more != tt.wantMore {
				t.Fatalf("got %d, more=%v; want %d, %v", len(subs), more, tt.wantN, tt.wantMore)
			}
			if len(h.Submissions.Queries) != 1 {
				t.Fatalf("queries = %+v", h.Submissions.Queries)
			}
			q := h.Submissions.Queries[0]
			if q.Page.Limit != tt.limit+1 || q.CreatedAfter != &after || q.CreatedBefore != &before {
				t.Fatalf("query = %+v, want limit %d and the bounds passed on", q, tt.limit+1)
			}
		})
	}
}

func TestListSubmissionsUnknownForm(t *testing.T) {
	h := apptest.New()
	f := h.CreateForm(t, "wsp_a")
	for _, c := range []struct {
		ws string
		q  capture.ListSubmissions
	}{
		{"wsp_a", capture.ListSubmissions{FormID: "frm_nope", Page: ports.Page{Limit: 10}}},
		{"wsp_b", capture.ListSubmissions{FormID: f.ID(), Page: ports.Page{Limit: 10}}},
	} {
		q := c.q
		if _, _, err := h.App.Queries.ListSubmissions.Handle(apptest.As(c.ws, apikey.ScopeAdmin), q); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("ListSubmissions(%+v) = %v, want ErrNotFound", q, err)
		}
	}
	if len(h.Submissions.Queries) != 0 {
		t.Fatal("submissions listed for a form that is not found")
	}
}

func TestGetAndDeleteSubmissionScoped(t *testing.T) {
	h := apptest.New()
	f := h.CreateForm(t, "wsp_a", captureFields()...)
	s, err := h.App.Commands.CaptureSubmission.Handle(ctx, capture.CaptureSubmission{
		FormID: f.ID(), Source: submission.SourceAPI,
		Data: map[string]submission.Input{f.Fields()[0].ID: "x"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.App.Queries.GetSubmission.Handle(apptest.As("wsp_b", apikey.ScopeAdmin), capture.GetSubmission{FormID: f.ID(), ID: s.ID()}); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("other workspace: %v", err)
	}
	if err := h.App.Commands.DeleteSubmission.Handle(ctx, capture.DeleteSubmission{FormID: f.ID(), ID: s.ID()}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.App.Queries.GetSubmission.Handle(ctx, capture.GetSubmission{FormID: f.ID(), ID: s.ID()}); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("after delete: %v", err)
	}
}

// Deleting a form or a submission records who did it and what went, never what the respondent
// sent, in the deletion's own transaction (the repository receives the event with the change).
func TestDeletionsAreAudited(t *testing.T) {
	h := apptest.New()
	f := h.CreateForm(t, "wsp_a", captureFields()...)
	s, err := h.App.Commands.CaptureSubmission.Handle(ctx, capture.CaptureSubmission{
		FormID: f.ID(), Source: submission.SourceAPI,
		Data: map[string]submission.Input{f.Fields()[0].ID: "Ada Lovelace"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.App.Commands.DeleteSubmission.Handle(ctx, capture.DeleteSubmission{FormID: f.ID(), ID: s.ID()}); err != nil {
		t.Fatal(err)
	}
	if err := h.App.Commands.DeleteForm.Handle(ctx, forms.DeleteForm{ID: f.ID()}); err != nil {
		t.Fatal(err)
	}
	actor := audit.Actor{Type: audit.ActorAPIKey, ID: "key_test", Name: "test key"}
	for _, tc := range []struct {
		got    []audit.Event
		action audit.Action
		target audit.Target
	}{
		{h.Audit.Of(audit.SubmissionDeleted), audit.SubmissionDeleted, audit.Target{Type: "submission", ID: s.ID()}},
		{h.Audit.Of(audit.FormDeleted), audit.FormDeleted, audit.Target{Type: "form", ID: f.ID()}},
	} {
		if len(tc.got) != 1 {
			t.Fatalf("%s: %d events", tc.action, len(tc.got))
		}
		e := tc.got[0]
		if e.Action != tc.action || e.Actor != actor || e.Target == nil || *e.Target != tc.target || e.WorkspaceID != "wsp_a" ||
			!strings.HasPrefix(e.ID, ports.PrefixAudit+"_") || !e.CreatedAt.Equal(apptest.Now) {
			t.Errorf("event %+v", e)
		}
		if fmt.Sprint(e.Details) != "map[]" && fmt.Sprint(e.Details) != "map[form_id:"+f.ID()+"]" || strings.Contains(fmt.Sprint(e.Details), "Ada") {
			t.Errorf("%s details %v", tc.action, e.Details)
		}
	}
	// A refused deletion records nothing.
	readOnly := apptest.As("wsp_a", apikey.ScopeReadOnly)
	g := h.CreateForm(t, "wsp_a")
	if err := h.App.Commands.DeleteForm.Handle(readOnly, forms.DeleteForm{ID: g.ID()}); !errors.Is(err, auth.ErrForbidden) {
		t.Fatalf("read-only delete: %v", err)
	}
	if len(h.Audit.Of(audit.FormDeleted)) != 1 || len(h.Forms.Items) != 1 {
		t.Fatalf("refused delete changed something: %d events, %d forms", len(h.Audit.Of(audit.FormDeleted)), len(h.Forms.Items))
	}
}
