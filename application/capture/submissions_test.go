package capture_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/formward/formward/application/apptest"
	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/application/capture"
	"github.com/formward/formward/application/forms"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/apikey"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/ports"
)

// ctx acts as an admin key of workspace wsp_a: the use cases read who acts from the context.
var ctx = apptest.As("wsp_a", apikey.ScopeAdmin)

func TestCaptureSubmission(t *testing.T) {
	h := apptest.New()
	f := h.CreateForm(t, "wsp_a", apptest.NameAndAge()...)
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
			f := h.CreateForm(t, "wsp_a", apptest.NameAndAge()...)
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
	f := h.CreateForm(t, "wsp_a", apptest.NameAndAge()...) // draft: the API accepts it
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
	draft := h.CreateForm(t, "wsp_a", apptest.NameAndAge()...)
	archived := h.CreateForm(t, "wsp_a", apptest.NameAndAge()...)
	h.SetStatus(t, "wsp_a", archived.ID(), "archived")
	published := h.CreateForm(t, "wsp_a", apptest.NameAndAge()...)
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
	f := h.CreateForm(t, "wsp_a", apptest.NameAndAge()...)
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

func TestListSubmissionsHasMore(t *testing.T) {
	for _, tt := range []apptest.PageCase{
		{Stored: 0, Limit: 20, WantN: 0, WantMore: false},
		{Stored: 5, Limit: 2, WantN: 2, WantMore: true},
		{Stored: 5, Limit: 5, WantN: 5, WantMore: false},
		{Stored: 6, Limit: 5, WantN: 5, WantMore: true},
	} {
		t.Run(tt.String(), func(t *testing.T) {
			h := apptest.New()
			f := h.CreateForm(t, "wsp_a", apptest.NameAndAge()...)
			for i := 0; i < tt.Stored; i++ {
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
				FormID: f.ID(), Page: ports.Page{Limit: tt.Limit},
				CreatedAfter: &after, CreatedBefore: &before,
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(subs) != tt.WantN || more != tt.WantMore {
				t.Fatalf("got %d, more=%v; want %d, %v", len(subs), more, tt.WantN, tt.WantMore)
			}
			if len(h.Submissions.Queries) != 1 {
				t.Fatalf("queries = %+v", h.Submissions.Queries)
			}
			q := h.Submissions.Queries[0]
			if q.Page.Limit != tt.Limit+1 || q.CreatedAfter != &after || q.CreatedBefore != &before {
				t.Fatalf("query = %+v, want limit %d and the bounds passed on", q, tt.Limit+1)
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
	f := h.CreateForm(t, "wsp_a", apptest.NameAndAge()...)
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
	f := h.CreateForm(t, "wsp_a", apptest.NameAndAge()...)
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
		// A submission's event names its form, a form's its name; neither holds an answer.
		if d := fmt.Sprint(e.Details); d != "map[name:Contact]" && d != "map[form_id:"+f.ID()+"]" || strings.Contains(d, "Ada") {
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
