package workflows_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/formward/formward/application/apptest"
	"github.com/formward/formward/application/workflows"
	"github.com/formward/formward/domain/apikey"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/domain/workflow"
	"github.com/formward/formward/ports"
)

// fakeLinks signs every value under the submission's prefix, as the file signer does.
type fakeLinks struct{}

func (fakeLinks) SubmissionLink(ws, formID, subID, value string, expires time.Time) (string, bool) {
	if !strings.HasPrefix(value, "https://forms.example/files/"+ports.SubmissionFilesPrefix(ws, formID, subID)) {
		return "", false
	}
	return value + "?expires=" + expires.UTC().Format("20060102"), true
}

// notificationWorld is a runs world whose form has a file field, notifications switched on as
// given, and a send_email runner.
func notificationWorld(t *testing.T, n func(fields []form.Field) form.Notifications) (*runsWorld, *scriptedRunner) {
	t.Helper()
	w := newRunsWorld(t)
	specs := []form.FieldSpec{}
	for _, f := range w.form.Fields() {
		specs = append(specs, form.FieldSpec{ID: f.ID, Label: f.Label, Type: string(f.Type), Options: f.Options})
	}
	specs = append(specs, form.FieldSpec{Label: "CV", Type: "file"})
	if _, err := w.form.Apply(form.Patch{Fields: &specs}, func() string { return w.ids.New("fld") }, form.DefaultLimits, runsT0); err != nil {
		t.Fatal(err)
	}
	s := w.form.Settings()
	s.Notifications = n(w.form.Fields())
	if _, err := w.form.Apply(form.Patch{Settings: &s}, nil, form.DefaultLimits, runsT0); err != nil {
		t.Fatal(err)
	}
	fs := w.form.Fields()
	sub, err := submission.New("sub_2", w.form, map[string]submission.Input{fs[0].ID: "1500", fs[1].ID: "ada@example.com",
		fs[2].ID: []any{"a", "b"}, fs[3].ID: "https://forms.example/files/" + ports.SubmissionFilesPrefix("wsp_a", "frm_1", "sub_2") + "0123/cv.pdf"},
		submission.Metadata{Source: "api"}, runsT0)
	if err != nil {
		t.Fatal(err)
	}
	w.sub = sub
	_ = w.submissions.Add(context.Background(), sub, event.Event{})
	mailer := &scriptedRunner{typ: "send_email"}
	w.engine = workflows.NewRunEngine(workflows.RunEngineDeps{Runs: w.runs, Forms: w.forms, Submissions: w.submissions,
		Integrations: w.integrations, Clock: w.clock, Files: fakeLinks{}}, map[string]ports.ActionRunner{"send_email": mailer},
		workflows.RunEngineConfig{Retry: testSchedule}, nil)
	return w, mailer
}

func bothOn(fields []form.Field) form.Notifications {
	return form.Notifications{
		Owner:      form.OwnerNotification{Enabled: true, To: []string{"owner@example.com", "boss@example.com"}},
		Respondent: form.RespondentNotification{Enabled: true, EmailFieldID: fields[1].ID, Subject: "Thanks, {{form_name}}", Body: "Budget {{" + fields[0].ID + "}}"},
	}
}

func runsByKind(rs []*workflow.Run) map[workflow.RunKind]*workflow.Run {
	out := map[workflow.RunKind]*workflow.Run{}
	for _, r := range rs {
		out[r.Kind()] = r
	}
	return out
}

func TestRunStarterQueuesOneRunPerEnabledNotification(t *testing.T) {
	ctx := context.Background()
	w, _ := notificationWorld(t, bothOn)
	e := w.event()
	if err := w.starter.HandleBatch(ctx, []event.Event{e}); err != nil {
		t.Fatal(err)
	}
	// Redelivered: nothing more. An update of the submission sends no notification.
	upd := e
	upd.ID, upd.Type = "evt_2", event.SubmissionUpdated
	if err := w.starter.HandleBatch(ctx, []event.Event{e, upd}); err != nil {
		t.Fatal(err)
	}
	rs := w.runs.All()
	if len(rs) != 2 {
		t.Fatalf("%d runs, want 2", len(rs))
	}
	byKind := runsByKind(rs)
	owner, resp := byKind[workflow.KindOwner], byKind[workflow.KindRespondent]
	if owner == nil || resp == nil || owner.WorkflowID() != "" || owner.SubmissionID() != "sub_2" || owner.FormID() != "frm_1" {
		t.Fatalf("runs %v", byKind)
	}
	oa, ra := owner.Actions(), resp.Actions()
	if len(oa) != 1 || oa[0].Type != "send_email" || len(oa[0].Config["to"].([]any)) != 2 {
		t.Fatalf("owner action %+v", oa)
	}
	fs := w.form.Fields()
	if len(ra) != 1 || ra[0].Config["to"] != "{{"+fs[1].ID+"}}" || ra[0].Config["subject"] != "Thanks, {{form_name}}" {
		t.Fatalf("respondent action %+v", ra)
	}
}

func TestRunStarterSkipsNotificationsThatAreOffOrHaveNoAddress(t *testing.T) {
	ctx := context.Background()
	w, _ := notificationWorld(t, func([]form.Field) form.Notifications { return form.Notifications{} })
	if err := w.starter.HandleBatch(ctx, []event.Event{w.event()}); err != nil {
		t.Fatal(err)
	}
	if n := len(w.runs.All()); n != 0 {
		t.Fatalf("%d runs with notifications off", n)
	}

	w, _ = notificationWorld(t, bothOn)
	fs := w.form.Fields()
	sub, err := submission.New("sub_3", w.form, map[string]submission.Input{fs[0].ID: "7"}, submission.Metadata{Source: "api"}, runsT0)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.starter.HandleBatch(ctx, []event.Event{event.ForSubmission("evt_3", event.SubmissionCreated, sub, runsT0)}); err != nil {
		t.Fatal(err)
	}
	if rs := w.runs.All(); len(rs) != 1 || rs[0].Kind() != workflow.KindOwner {
		t.Fatalf("without an email answer: %d runs", len(rs))
	}
}

func TestRunStarterAsksAgainWhenTheFormCannotBeRead(t *testing.T) {
	w, _ := notificationWorld(t, bothOn)
	starter := workflows.NewRunStarter(w.workflows, failingForms{w.forms}, w.runs, w.ids, w.clock, nil)
	if err := starter.HandleBatch(context.Background(), []event.Event{w.event()}); err == nil {
		t.Fatal("a failed form read was swallowed")
	}
}

type failingForms struct{ *apptest.Forms }

func (failingForms) Get(context.Context, string, string) (*form.Form, error) {
	return nil, errors.New("database is down")
}

func TestNotificationRunsSendEveryAnswerWithRetries(t *testing.T) {
	ctx := context.Background()
	w, mailer := notificationWorld(t, bothOn)
	mailer.script = []ports.ActionOutcome{{Err: errors.New("smtp: 451 try later")}}
	if err := w.starter.HandleBatch(ctx, []event.Event{w.event()}); err != nil {
		t.Fatal(err)
	}
	w.drain(t)
	byKind := runsByKind(w.runs.All())
	for _, r := range byKind {
		if r.Status() != workflow.RunSucceeded {
			t.Fatalf("%s run: %s %s", r.Kind(), r.Status(), actionStatuses(r))
		}
	}
	if got := actionStatuses(byKind[workflow.KindOwner]) + " " + actionStatuses(byKind[workflow.KindRespondent]); got != "succeeded:2 succeeded:1" &&
		got != "succeeded:1 succeeded:2" {
		t.Fatalf("attempts %s", got)
	}
	var owner, resp *ports.ActionInput
	for i := range mailer.calls {
		switch in := &mailer.calls[i]; in.Notification {
		case "owner":
			owner = in
		case "respondent":
			resp = in
		}
	}
	if owner == nil || resp == nil {
		t.Fatalf("calls %+v", mailer.calls)
	}
	fs := w.form.Fields()
	if owner.ReplyTo != "ada@example.com" || owner.FormName != "Leads" || owner.Subject != "" || len(owner.Answers) != 4 {
		t.Fatalf("owner input: reply-to %q, subject %q, %d answers", owner.ReplyTo, owner.Subject, len(owner.Answers))
	}
	a := owner.Answers
	if a[0].Label != "Budget" || a[0].Values[0] != "1500" || a[1].Label != "Email" || a[2].Label != "Topics" ||
		strings.Join(a[2].Values, ", ") != "a, b" || !a[3].File || a[3].Label != "CV" || a[0].FieldID != fs[0].ID {
		t.Fatalf("answers %+v", a)
	}
	wantLink := "https://forms.example/files/" + ports.SubmissionFilesPrefix("wsp_a", "frm_1", "sub_2") + "0123/cv.pdf?expires=" +
		runsT0.Add(workflows.NotificationFileLinkLifetime).Format("20060102")
	if len(a[3].Values) != 1 || a[3].Values[0] != wantLink {
		t.Fatalf("file link %q, want %q", a[3].Values, wantLink)
	}
	if got := resp.Render(resp.Config["to"].(string), false); got != "ada@example.com" {
		t.Fatalf("respondent to %q", got)
	}
	if got := resp.Render(resp.Config["subject"].(string), false) + " / " + resp.Render(resp.Config["body"].(string), false); got != "Thanks, Leads / Budget 1500" {
		t.Fatalf("respondent message %q", got)
	}
}

func TestListNotificationRuns(t *testing.T) {
	ctx := context.Background()
	w, _ := notificationWorld(t, bothOn)
	if err := w.starter.HandleBatch(ctx, []event.Event{w.event()}); err != nil {
		t.Fatal(err)
	}
	h := workflows.NewListNotificationRunsHandler(w.forms, w.runs)
	ctx = apptest.As("wsp_a", apikey.ScopeReadOnly)
	rs, more, err := h.Handle(ctx, workflows.ListNotificationRuns{FormID: "frm_1", Page: ports.Page{Limit: 1}})
	if err != nil || len(rs) != 1 || !more {
		t.Fatalf("page: %d runs, more %v, %v", len(rs), more, err)
	}
	if _, _, err := h.Handle(apptest.As("wsp_b", apikey.ScopeAdmin), workflows.ListNotificationRuns{FormID: "frm_1", Page: ports.Page{Limit: 1}}); err == nil {
		t.Fatal("another workspace's form was listed")
	}
}

// A form-backend post's _replyto and _subject (kept in the sealed metadata) replace the owner
// email's reply-to (the first email answer) and its subject.
func TestOwnerNotificationTakesFormBackendReplyToAndSubject(t *testing.T) {
	ctx := context.Background()
	w, mailer := notificationWorld(t, bothOn)
	fs := w.form.Fields()
	replyTo, subject := "grace@example.com", "Quote request"
	sub, err := submission.New("sub_5", w.form, map[string]submission.Input{fs[0].ID: "900", fs[1].ID: "ada@example.com"},
		submission.Metadata{Source: "api", ReplyTo: &replyTo, Subject: &subject}, runsT0)
	if err != nil {
		t.Fatal(err)
	}
	w.sub = sub
	if err := w.submissions.Add(ctx, sub, event.Event{}); err != nil {
		t.Fatal(err)
	}
	if err := w.starter.HandleBatch(ctx, []event.Event{w.event()}); err != nil {
		t.Fatal(err)
	}
	w.drain(t)
	for _, in := range mailer.calls {
		if in.Notification != "owner" {
			continue
		}
		if in.ReplyTo != replyTo || in.Subject != subject {
			t.Fatalf("owner email reply-to %q subject %q, want the form-backend's %q and %q", in.ReplyTo, in.Subject, replyTo, subject)
		}
		return
	}
	t.Fatalf("no owner email among %d calls", len(mailer.calls))
}
