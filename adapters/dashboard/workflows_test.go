package dashboard_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	"github.com/formward/formward/application/forms"
	"github.com/formward/formward/application/workflows"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/retry"
	"github.com/formward/formward/domain/workflow"
)

var workflowLink = regexp.MustCompile(`/app/workflows/(wfl?_[A-Za-z0-9]+)`)

// TestWorkflowPages: the builder adds a condition and a second action by posting back, saves
// a workflow with one condition and two actions, shows an error next to the action at fault,
// shows the run log with a Retry button on the failed run only, queues that run again, disables
// the workflow, refuses a viewer, and deletes it after confirmation.
func TestWorkflowPages(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		h, _ := routingHarness(t, db)
		b := h.owner()
		sctx, wsID := systemCtx(t, db)
		fv, err := h.app.Commands.CreateForm.Handle(sctx, forms.CreateForm{Draft: form.Draft{Name: "Contact",
			Fields: []form.FieldSpec{{Label: "Email", Type: "email"}, {Label: "Plan", Type: "text"}}}})
		if err != nil {
			t.Fatal(err)
		}
		f := fv.Form
		email, plan := f.Fields()[0].ID, f.Fields()[1].ID
		b.get("/app/workflows").expect(t, http.StatusOK)
		page := b.get("/app/workflows/new?form="+f.ID()).expect(t, http.StatusOK)
		if !strings.Contains(page.body, "{{email}}") || !strings.Contains(page.body, "{{plan}}") || strings.Contains(page.body, "{{"+email+"}}") {
			t.Fatalf("no field keys in the builder: %s", text(page.body))
		}
		base := url.Values{"form_id": {f.ID()}, "name": {"Sales leads"}, "event": {"submission.created"}, "enabled": {"1"},
			"conditions": {"0"}, "actions": {"1"}, "a0.type": {"send_email"}, "a0.to": {"sales@example.org"},
			"a0.subject": {"New lead {{" + email + "}}"}, "a0.body": {"Plan: {{" + plan + "}}"}}
		with := func(extra url.Values) url.Values {
			v := url.Values{}
			for k, x := range base {
				v[k] = x
			}
			for k, x := range extra {
				v[k] = x
			}
			return v
		}
		added := b.post("/app/workflows", with(url.Values{"op": {"add-condition"}})).expect(t, http.StatusOK)
		if !strings.Contains(added.body, `name="c0.field"`) || !strings.Contains(added.body, `<option value="`+plan+`">Plan</option>`) ||
			!strings.Contains(added.body, `value="New lead {{`+email+`}}"`) {
			t.Fatalf("add condition: %s", text(added.body))
		}
		added = b.post("/app/workflows", with(url.Values{"op": {"add-action"}, "new_action": {"send_webhook"}})).expect(t, http.StatusOK)
		if !strings.Contains(added.body, `name="a1.url"`) {
			t.Fatalf("add action: %s", text(added.body))
		}

		bad := b.post("/app/workflows", with(url.Values{"op": {"save"}, "conditions": {"1"}, "c0.field": {plan}, "c0.op": {"equals"}, "c0.value": {"pro"},
			"actions": {"2"}, "a1.type": {"send_webhook"}, "a1.url": {"http://127.0.0.1:9/x"}})).expect(t, http.StatusUnprocessableEntity)
		if !regexp.MustCompile(`<p class="field-error">[^<]+</p>`).MatchString(bad.body) {
			t.Fatalf("no error next to the action: %s", text(bad.body))
		}
		saved := b.post("/app/workflows", with(url.Values{"op": {"save"}, "conditions": {"1"}, "c0.field": {plan}, "c0.op": {"equals"}, "c0.value": {"pro"},
			"actions": {"2"}, "a1.type": {"send_webhook"}, "a1.url": {"https://127.0.0.1:9/x"}, "a1.secret": {"wf-secret"}})).redirectsTo(t, "/app/workflows/")
		id := workflowLink.FindStringSubmatch(saved.Header.Get("Location"))[1]
		w, err := h.app.Queries.GetWorkflow.Handle(sctx, workflows.GetWorkflow{ID: id})
		if err != nil {
			t.Fatal(err)
		}
		tr := w.Trigger()
		if w.Name() != "Sales leads" || !w.Enabled() || len(tr.Conditions) != 1 || tr.Conditions[0].FieldID != plan ||
			tr.Conditions[0].Operator != workflow.Equals || tr.Conditions[0].Value != "pro" {
			t.Fatalf("workflow: %s %v %+v", w.Name(), w.Enabled(), tr)
		}
		as := w.Actions()
		if len(as) != 2 || as[0].Type != "send_email" || as[0].Config["subject"] != "New lead {{"+email+"}}" || as[1].Type != "send_webhook" ||
			as[1].Config["url"] != "https://127.0.0.1:9/x" {
			t.Fatalf("actions: %+v", as)
		}
		page = b.get("/app/workflows/"+id).expect(t, http.StatusOK)
		if strings.Contains(page.body, "wf-secret") || !strings.Contains(page.body, "A secret is set") || !strings.Contains(page.body, "No runs yet") {
			t.Fatalf("workflow page: %s", text(page.body))
		}

		// The run log: a failed run has a Retry button, a succeeded one has none.
		runs := persistence.NewRunRepository(db, persistencetest.Cipher())
		now := time.Now()
		failedRun := workflow.NewRun("run_failedone", w, event.Event{ID: "evt_runfailed", Type: event.SubmissionCreated, WorkspaceID: wsID,
			FormID: f.ID(), OccurredAt: now, Data: map[string]any{"submission_id": "sub_one"}}, now)
		failedRun.Record(workflow.AttemptOutcome{Err: errors.New("the mail server refused"), Permanent: true}, now, retry.Default())
		doneRun := workflow.NewRun("run_doneone", w, event.Event{ID: "evt_rundone", Type: event.SubmissionCreated, WorkspaceID: wsID,
			FormID: f.ID(), OccurredAt: now, Data: map[string]any{"submission_id": "sub_two"}}, now)
		doneRun.Record(workflow.AttemptOutcome{}, now, retry.Default())
		doneRun.Record(workflow.AttemptOutcome{}, now, retry.Default())
		if err := runs.AddAll(context.Background(), []*workflow.Run{failedRun, doneRun}); err != nil {
			t.Fatal(err)
		}
		page = b.get("/app/workflows/"+id).expect(t, http.StatusOK)
		if !strings.Contains(page.body, "the mail server refused") || !strings.Contains(page.body, "Action 1 (Send an email) failed:") ||
			!strings.Contains(page.body, `action="/app/workflows/`+id+`/runs/run_failedone/retry"`) ||
			!strings.Contains(page.body, `Retry<span class="visually-hidden"> run run_failedone</span>`) || strings.Contains(page.body, "/runs/run_doneone/retry") {
			t.Fatalf("run log: %s", text(page.body))
		}
		b.post("/app/workflows/"+id+"/runs/run_failedone/retry", nil).redirectsTo(t, "/app/workflows/"+id)
		again, err := runs.Get(context.Background(), wsID, "run_failedone")
		if err != nil || again.Status() != workflow.RunQueued || again.NextAttemptAt() == nil {
			t.Fatalf("after retry: %v %v", again, err)
		}
		page = b.get("/app/workflows/"+id).expect(t, http.StatusOK)
		if !strings.Contains(page.body, "Run queued again") || strings.Contains(page.body, "/runs/run_failedone/retry") {
			t.Fatalf("after retry the page: %s", text(page.body))
		}
		refused := b.post("/app/workflows/"+id+"/runs/run_doneone/retry", nil).expect(t, http.StatusConflict)
		if !strings.Contains(refused.body, "Only a failed run can be retried") {
			t.Fatalf("retry of a succeeded run: %s", text(refused.body))
		}

		b.post("/app/workflows/"+id+"/enabled", url.Values{"enabled": {"0"}}).redirectsTo(t, "/app/workflows/"+id)
		if w, _ := h.app.Queries.GetWorkflow.Handle(sctx, workflows.GetWorkflow{ID: id}); w.Enabled() {
			t.Fatal("still enabled")
		}
		list := b.get("/app/workflows?form="+f.ID()).expect(t, http.StatusOK)
		if !strings.Contains(list.body, "Sales leads") || !strings.Contains(list.body, "Disabled") {
			t.Fatalf("list: %s", text(list.body))
		}

		viewer := h.member(b, "viewer@example.org", "viewer")
		// Another failed run: the owner sees its Retry button, the viewer only its log.
		failedTwo := workflow.NewRun("run_failedtwo", w, event.Event{ID: "evt_runfailed2", Type: event.SubmissionCreated, WorkspaceID: wsID,
			FormID: f.ID(), OccurredAt: now, Data: map[string]any{"submission_id": "sub_three"}}, now)
		failedTwo.Record(workflow.AttemptOutcome{Err: errors.New("refused again"), Permanent: true}, now, retry.Default())
		if err := runs.AddAll(context.Background(), []*workflow.Run{failedTwo}); err != nil {
			t.Fatal(err)
		}
		if op := b.get("/app/workflows/"+id).expect(t, http.StatusOK); !strings.Contains(op.body, "/runs/run_failedtwo/retry") {
			t.Fatalf("the owner's run log: %s", text(op.body))
		}
		if vp := viewer.get("/app/workflows/"+id).expect(t, http.StatusOK); !strings.Contains(vp.body, "refused again") || strings.Contains(vp.body, "/retry") {
			t.Fatalf("the viewer's run log: %s", text(vp.body))
		}
		viewer.post("/app/workflows/"+id+"/runs/run_failedtwo/retry", nil).expect(t, http.StatusForbidden)
		viewer.post("/app/workflows/"+id+"/enabled", url.Values{"enabled": {"1"}}).expect(t, http.StatusForbidden)
		viewer.post("/app/workflows", with(url.Values{"op": {"save"}})).expect(t, http.StatusForbidden)
		viewer.post("/app/workflows/"+id+"/delete", nil).expect(t, http.StatusForbidden)

		b.get("/app/workflows/"+id+"/delete").expect(t, http.StatusOK)
		b.post("/app/workflows/"+id+"/delete", nil).redirectsTo(t, "/app/workflows")
		b.get("/app/workflows/"+id).expect(t, http.StatusNotFound)
	})
}
