package persistence_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/workflow"
	"github.com/formward/formward/ports"
)

func notificationRun(e event.Event, kind workflow.RunKind, at time.Time) *workflow.Run {
	return workflow.StartNotificationRun(newID("run"), e.WorkspaceID, kind, workflow.ActionSnapshot{ActionID: string(kind), Type: "send_email",
		Config: map[string]any{"to": "{{fld_a}}", "subject": "Thanks", "body": "Hello"}}, e, at)
}

// Notification runs have no workflow, are unique per form, event and kind, are listed per form
// newest first apart from workflow runs, and are claimed and saved like any run.
func TestNotificationRuns(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		runs := runRepo(r)
		a := mustWorkspace(t, r, base)
		e1 := event.Event{ID: newID("evt"), Type: event.SubmissionCreated, WorkspaceID: a.ID(), FormID: "frm_n", OccurredAt: base,
			Data: map[string]any{"submission_id": newID("sub"), "fields": map[string]any{"fld_a": "ada@example.com"}}}
		e2 := e1
		e2.ID = newID("evt")
		owner1, resp1 := notificationRun(e1, workflow.KindOwner, base), notificationRun(e1, workflow.KindRespondent, base)
		owner2 := notificationRun(e2, workflow.KindOwner, base.Add(time.Second))
		wf := buildRunFor(e1, "wfl_1", base, "s")
		noErr(t, runs.AddAll(ctx, []*workflow.Run{owner1, resp1, wf}))
		noErr(t, runs.AddAll(ctx, []*workflow.Run{owner2}))

		// A redelivered event adds no second run of either kind, and leaves the workflow run alone.
		noErr(t, runs.AddAll(ctx, []*workflow.Run{notificationRun(e1, workflow.KindOwner, base), notificationRun(e1, workflow.KindRespondent, base),
			buildRunFor(e1, "wfl_1", base, "s")}))

		list, err := runs.ListNotifications(ctx, a.ID(), "frm_n", ports.Page{Limit: 10})
		noErr(t, err)
		if len(list) != 3 || list[0].ID() != owner2.ID() {
			t.Fatalf("listed %d runs, first %s", len(list), list[0].ID())
		}
		kinds := map[workflow.RunKind]int{}
		for _, run := range list {
			kinds[run.Kind()]++
			if run.WorkflowID() != "" {
				t.Fatalf("notification run with workflow %q", run.WorkflowID())
			}
		}
		if kinds[workflow.KindOwner] != 2 || kinds[workflow.KindRespondent] != 1 {
			t.Fatalf("kinds %v", kinds)
		}
		page, err := runs.ListNotifications(ctx, a.ID(), "frm_n", ports.Page{Limit: 2})
		noErr(t, err)
		rest, err := runs.ListNotifications(ctx, a.ID(), "frm_n", ports.Page{Limit: 2,
			After: &ports.Position{CreatedAt: page[1].CreatedAt(), ID: page[1].ID()}})
		noErr(t, err)
		if len(page) != 2 || len(rest) != 1 || rest[0].ID() == page[0].ID() || rest[0].ID() == page[1].ID() {
			t.Fatalf("pages %d + %d", len(page), len(rest))
		}
		if other, err := runs.ListNotifications(ctx, a.ID(), "frm_other", ports.Page{Limit: 10}); err != nil || len(other) != 0 {
			t.Fatalf("another form: %d runs, %v", len(other), err)
		}
		wfRuns, err := runs.List(ctx, a.ID(), "wfl_1", ports.Page{Limit: 10})
		noErr(t, err)
		if len(wfRuns) != 1 || wfRuns[0].Kind() != workflow.KindWorkflow || wfRuns[0].WorkflowID() != "wfl_1" {
			t.Fatalf("workflow runs: %+v", wfRuns)
		}

		// Claimed, recorded and saved like workflow runs.
		claimed, err := runs.ClaimDue(ctx, ports.Claim{Now: base.Add(time.Hour), Limit: 10, PerWorkspace: 10, Lease: time.Minute})
		noErr(t, err)
		if len(claimed) != 4 {
			t.Fatalf("claimed %d runs, want 4", len(claimed))
		}
		got, err := runs.Get(ctx, a.ID(), resp1.ID())
		noErr(t, err)
		got.Record(workflow.AttemptOutcome{}, base.Add(time.Hour), minuteSchedule(t))
		noErr(t, runs.Save(ctx, got))
		got, err = runs.Get(ctx, a.ID(), resp1.ID())
		noErr(t, err)
		if got.Kind() != workflow.KindRespondent || got.Status() != workflow.RunSucceeded || got.Actions()[0].Config["to"] != "{{fld_a}}" {
			t.Fatalf("after save: kind %s status %s", got.Kind(), got.Status())
		}
	})
}

func TestFormNotificationSettingsRoundTrip(t *testing.T) {
	each(t, func(t *testing.T, r repos) {
		ctx := context.Background()
		w := mustWorkspace(t, r, base)
		f := mustForm(t, r, w.ID(), base)
		emailField := f.Fields()[1].ID
		want := form.Notifications{
			Owner:      form.OwnerNotification{Enabled: true, To: []string{"owner@example.com", "boss@example.com"}},
			Respondent: form.RespondentNotification{Enabled: true, EmailFieldID: emailField, Subject: "Thanks {{form_name}}", Body: "<p>Hi</p>"},
		}
		_, err := r.forms.Update(ctx, w.ID(), f.ID(), func(f *form.Form) (ports.Effects, error) {
			s := f.Settings()
			s.Notifications = want
			_, err := f.Apply(form.Patch{Settings: &s}, nil, form.DefaultLimits, base)
			return ports.Effects{}, err
		})
		noErr(t, err)
		got, err := r.forms.Get(ctx, w.ID(), f.ID())
		noErr(t, err)
		n := got.Settings().Notifications
		if !n.Owner.Enabled || strings.Join(n.Owner.To, ",") != "owner@example.com,boss@example.com" || n.Respondent != want.Respondent {
			t.Fatalf("read back %+v", n)
		}
		plain, err := r.forms.Get(ctx, w.ID(), mustForm(t, r, w.ID(), base).ID())
		noErr(t, err)
		if n := plain.Settings().Notifications; n.Owner.Enabled || len(n.Owner.To) != 0 || n.Respondent.Enabled {
			t.Fatalf("a form without notifications reads %+v", n)
		}
	})
}
