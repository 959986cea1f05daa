package dashboard_test

import (
	"context"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/formward/formward/adapters/automation"
	"github.com/formward/formward/adapters/dashboard"
	"github.com/formward/formward/adapters/delivery"
	"github.com/formward/formward/adapters/email"
	"github.com/formward/formward/adapters/email/smtptest"
	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	"github.com/formward/formward/application"
	"github.com/formward/formward/application/forms"
	"github.com/formward/formward/application/workflows"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/retry"
	"github.com/formward/formward/domain/workflow"
	"github.com/formward/formward/ports"
)

// workflowHarness is the routing harness with the dashboard's mailer set: mail nil is a server
// without SMTP.
func workflowHarness(t *testing.T, db *persistence.DB, mail ports.ActionRunner) *harness {
	t.Helper()
	cipher := persistencetest.Cipher()
	return newHarnessWith(t, db, "http://127.0.0.1:8080", httptest.NewUnstartedServer(nil), func(d *application.Deps, o *dashboard.Options) {
		d.Webhooks = persistence.NewWebhookRepository(db, cipher)
		d.Deliveries = persistence.NewDeliveryRepository(db, cipher)
		d.URLs = delivery.URLChecker{AllowPrivate: true}
		d.Integrations = persistence.NewIntegrationRepository(db, cipher)
		d.Workflows = persistence.NewWorkflowRepository(db, cipher)
		d.Runs = persistence.NewRunRepository(db, cipher)
		runner := mail
		if runner == nil {
			m, err := email.New(email.Config{})
			if err != nil {
				t.Fatal(err)
			}
			runner = m
		}
		d.Actions = map[string]ports.ActionRunner{runner.Type(): runner, automation.TypeWebhook: automation.NewWebhook(nil)}
		o.Mail = mail
	})
}

// TestWorkflowEditorInWords: without SMTP, the editor picks a condition's question by label
// and saves its ID, says operators and events in words, lists the template keys ({{full_name}},
// never a field ID), numbers actions from 1 and warns on the email action; a condition on a
// field removed since shows "(removed field)" and still saves; the run log says which action
// failed and why, the stored error kept in the details.
func TestWorkflowEditorInWords(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		h := workflowHarness(t, db, nil)
		b := h.owner()
		sctx, wsID := systemCtx(t, db)
		fv, err := h.app.Commands.CreateForm.Handle(sctx, forms.CreateForm{Draft: form.Draft{Name: "Sign-up",
			Fields: []form.FieldSpec{{Label: "Full name", Type: "text"}, {Label: "Age", Type: "number"}}}})
		if err != nil {
			t.Fatal(err)
		}
		f := fv.Form
		nameID, ageID, nameKey := f.Fields()[0].ID, f.Fields()[1].ID, f.Fields()[0].Key
		if nameKey == "" {
			t.Fatal("the field has no key")
		}
		page := html.UnescapeString(b.get("/app/workflows/new?form="+f.ID()).expect(t, http.StatusOK).body)
		for _, want := range []string{"<code>{{" + nameKey + "}}</code> Full name", "{{submission_id}}", "{{form_name}}", "{{submitted_at}}",
			`<option value="submission.created" selected>A response is submitted</option>`, `<option value="submission.updated">A response is edited</option>`,
			"1. Send an email", "Email is not set up on this server: this action will fail until an administrator configures SMTP"} {
			if !strings.Contains(page, want) {
				t.Fatalf("new workflow page lacks %q: %s", want, text(page))
			}
		}
		if strings.Contains(page, "{{"+nameID+"}}") || strings.Contains(page, "0. Send") || strings.Contains(page, "Send a test") {
			t.Fatalf("new workflow page shows a field ID, numbers from 0 or offers a test: %s", text(page))
		}

		base := url.Values{"form_id": {f.ID()}, "name": {"Adults"}, "event": {"submission.created"}, "enabled": {"1"},
			"conditions": {"0"}, "actions": {"1"}, "a0.type": {"send_email"}, "a0.to": {"team@example.org"},
			"a0.subject": {"New sign-up {{" + nameKey + "}}"}, "a0.body": {"Hello"}}
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
		added := html.UnescapeString(b.post("/app/workflows", with(url.Values{"op": {"add-condition"}})).expect(t, http.StatusOK).body)
		for _, want := range []string{`<select id="c0-field" name="c0.field"`, `<option value="" selected>Choose a field</option>`,
			`<option value="` + nameID + `">Full name</option>`, `<option value="` + ageID + `">Age</option>`,
			`<option value="equals" selected>is</option>`, `<option value="greater_than">is more than</option>`, `aria-label="Condition 1"`} {
			if !strings.Contains(added, want) {
				t.Fatalf("the condition's pickers lack %q: %s", want, added)
			}
		}
		// No question chosen: the domain's message next to the picker, the rest kept.
		bad := html.UnescapeString(b.post("/app/workflows", with(url.Values{"op": {"save"}, "conditions": {"1"}, "c0.field": {""},
			"c0.op": {"greater_than"}, "c0.value": {"17"}})).expect(t, http.StatusUnprocessableEntity).body)
		if !strings.Contains(bad, `<select id="c0-field" name="c0.field" aria-invalid="true"`) || !strings.Contains(bad, "Choose the question this condition tests.") || !strings.Contains(bad, `value="17"`) ||
			!strings.Contains(bad, `<option value="greater_than" selected>is more than</option>`) {
			t.Fatalf("a condition without a question: %s", text(bad))
		}
		saved := b.post("/app/workflows", with(url.Values{"op": {"save"}, "conditions": {"1"}, "c0.field": {ageID},
			"c0.op": {"greater_than"}, "c0.value": {"17"}})).redirectsTo(t, "/app/workflows/")
		id := workflowLink.FindStringSubmatch(saved.Header.Get("Location"))[1]
		w, err := h.app.Queries.GetWorkflow.Handle(sctx, workflows.GetWorkflow{ID: id})
		if err != nil {
			t.Fatal(err)
		}
		if cs := w.Trigger().Conditions; len(cs) != 1 || cs[0].FieldID != ageID || cs[0].Operator != workflow.GreaterThan {
			t.Fatalf("saved conditions %+v", cs)
		}
		page = html.UnescapeString(b.get("/app/workflows/"+id).expect(t, http.StatusOK).body)
		if !strings.Contains(page, `<option value="`+ageID+`" selected>Age</option>`) || strings.Contains(page, "Send a test") {
			t.Fatalf("saved workflow page: %s", text(page))
		}

		// The question is removed from the form: the condition shows it as removed, and the rest
		// of the workflow is still edited and saved with it; changing that condition asks for
		// another question.
		b.post("/app/forms/"+f.ID()+"/fields/"+ageID+"/remove", nil).redirectsTo(t, "/app/forms/"+f.ID())
		page = html.UnescapeString(b.get("/app/workflows/"+id).expect(t, http.StatusOK).body)
		if !strings.Contains(page, `<option value="`+ageID+`" selected>(removed field)</option>`) || strings.Contains(page, ">Age<") {
			t.Fatalf("condition on a removed field: %s", text(page))
		}
		b.post("/app/workflows/"+id, with(url.Values{"op": {"save"}, "name": {"Adults only"}, "conditions": {"1"}, "c0.field": {ageID},
			"c0.op": {"greater_than"}, "c0.value": {"17"}, "a0.id": {w.Actions()[0].ID}})).redirectsTo(t, "/app/workflows/"+id)
		if w, _ := h.app.Queries.GetWorkflow.Handle(sctx, workflows.GetWorkflow{ID: id}); w.Name() != "Adults only" || len(w.Trigger().Conditions) != 1 ||
			w.Trigger().Conditions[0].FieldID != ageID {
			t.Fatalf("after saving with a removed field's condition: %s %+v", w.Name(), w.Trigger())
		}
		changed := html.UnescapeString(b.post("/app/workflows/"+id, with(url.Values{"op": {"save"}, "conditions": {"1"}, "c0.field": {ageID},
			"c0.op": {"greater_than"}, "c0.value": {"18"}, "a0.id": {w.Actions()[0].ID}})).expect(t, http.StatusUnprocessableEntity).body)
		if !strings.Contains(changed, "This question is not in the form; choose another.") || !strings.Contains(changed, `value="18"`) {
			t.Fatalf("changed condition on a removed field: %s", text(changed))
		}

		// The run log: action 2 failed because email is not set up; action 1 went through.
		w, _ = h.app.Queries.GetWorkflow.Handle(sctx, workflows.GetWorkflow{ID: id})
		hook := "https://127.0.0.1:9/hook"
		two := []workflow.ActionSpec{{Type: "send_webhook", Config: map[string]any{"url": hook}}, {ID: w.Actions()[0].ID, Type: "send_email", Config: w.Actions()[0].Config}}
		if w, err = h.app.Commands.UpdateWorkflow.Handle(sctx, workflows.UpdateWorkflow{ID: id, Patch: workflow.Patch{Actions: &two}}); err != nil {
			t.Fatal(err)
		}
		now := time.Now()
		run := workflow.NewRun("run_noemail", w, event.Event{ID: "evt_noemail", Type: event.SubmissionCreated, WorkspaceID: wsID,
			FormID: f.ID(), OccurredAt: now, Data: map[string]any{"submission_id": "sub_one"}}, now)
		run.Record(workflow.AttemptOutcome{StatusCode: 200}, now, retry.Default())
		run.Record(workflow.AttemptOutcome{Err: email.ErrNotConfigured, Permanent: true}, now, retry.Default())
		if err := persistence.NewRunRepository(db, persistencetest.Cipher()).AddAll(context.Background(), []*workflow.Run{run}); err != nil {
			t.Fatal(err)
		}
		page = html.UnescapeString(b.get("/app/workflows/"+id).expect(t, http.StatusOK).body)
		for _, want := range []string{"1. Post to a URL (webhook)", "2. Send an email",
			"<strong>Action 2 (Send an email) failed: email is not set up on this server, so nothing was sent.",
			"A response is submitted", "<summary>Technical details", "<code>" + email.ErrNotConfigured.Error() + "</code>"} {
			if !strings.Contains(page, want) {
				t.Fatalf("run log lacks %q: %s", want, text(page))
			}
		}
		if strings.Contains(page, "<code>submission.created</code>") {
			t.Fatalf("the run log shows the event's code: %s", text(page))
		}
	})
}

// TestWorkflowEditorSendsATestEmail: with SMTP configured the warning is gone and a saved email
// action has "Send a test", which sends one message through the mailer (example values in place
// of the answers, to the signed-in person when "To" is a template) and says so after a 303.
func TestWorkflowEditorSendsATestEmail(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		srv := smtptest.Start(t, smtptest.Options{})
		mail, err := email.New(email.Config{URL: "smtp://" + srv.Addr, From: "forms@example.com", Timeout: 3 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		h := workflowHarness(t, db, mail)
		b := h.owner()
		sctx, _ := systemCtx(t, db)
		fv, err := h.app.Commands.CreateForm.Handle(sctx, forms.CreateForm{Draft: form.Draft{Name: "Sign-up",
			Fields: []form.FieldSpec{{Label: "Full name", Type: "text"}, {Label: "Email", Type: "email"}}}})
		if err != nil {
			t.Fatal(err)
		}
		f := fv.Form
		nameKey, emailKey := f.Fields()[0].Key, f.Fields()[1].Key
		page := b.get("/app/workflows/new?form="+f.ID()).expect(t, http.StatusOK).body
		if strings.Contains(page, "Email is not set up on this server") {
			t.Fatalf("the SMTP warning with SMTP configured: %s", text(page))
		}
		saved := b.post("/app/workflows", url.Values{"form_id": {f.ID()}, "name": {"Thanks"}, "event": {"submission.created"},
			"enabled": {"1"}, "conditions": {"0"}, "actions": {"1"}, "a0.type": {"send_email"}, "a0.to": {"{{" + emailKey + "}}"},
			"a0.subject": {"Welcome {{" + nameKey + "}}"}, "a0.body": {"Hello {{" + nameKey + "}}, thanks."}, "op": {"save"}}).redirectsTo(t, "/app/workflows/")
		id := workflowLink.FindStringSubmatch(saved.Header.Get("Location"))[1]
		w, err := h.app.Queries.GetWorkflow.Handle(sctx, workflows.GetWorkflow{ID: id})
		if err != nil {
			t.Fatal(err)
		}
		actionID := w.Actions()[0].ID
		test := "/app/workflows/" + id + "/actions/" + actionID + "/test"
		page = b.get("/app/workflows/"+id).expect(t, http.StatusOK).body
		if !strings.Contains(page, `formaction="`+test+`"`) || strings.Contains(page, "Email is not set up on this server") {
			t.Fatalf("no Send a test on the saved email action: %s", text(page))
		}
		viewer := h.member(b, "viewer@example.org", "viewer")
		if vp := viewer.get("/app/workflows/"+id).expect(t, http.StatusOK).body; strings.Contains(vp, "Send a test") {
			t.Fatalf("a viewer is offered Send a test: %s", text(vp))
		}
		viewer.post(test, nil).expect(t, http.StatusForbidden)
		if n := len(srv.Messages()); n != 0 {
			t.Fatalf("%d messages before the test", n)
		}

		b.post(test, nil).redirectsTo(t, "/app/workflows/"+id)
		msgs := srv.Messages()
		if len(msgs) != 1 || len(msgs[0].Rcpts) != 1 || msgs[0].Rcpts[0] != "ada@example.org" {
			t.Fatalf("messages %+v", msgs)
		}
		if s := msgs[0].Subject(t); s != "[Test] Welcome [Full name]" {
			t.Fatalf("subject %q", s)
		}
		if body := string(msgs[0].Body); !strings.Contains(body, "Hello [Full name], thanks.") {
			t.Fatalf("body %q", body)
		}
		page = html.UnescapeString(b.get("/app/workflows/"+id).expect(t, http.StatusOK).body)
		if !strings.Contains(page, "Test email of action 1 sent to ada@example.org") {
			t.Fatalf("no notice after the test: %s", text(page))
		}

		// A refused recipient: the notice says why, in words, and nothing is delivered.
		bad := []workflow.ActionSpec{{ID: actionID, Type: "send_email", Config: map[string]any{"to": "someone@rejected.example", "subject": "Hi", "body": "Hi"}}}
		if _, err := h.app.Commands.UpdateWorkflow.Handle(sctx, workflows.UpdateWorkflow{ID: id, Patch: workflow.Patch{Actions: &bad}}); err != nil {
			t.Fatal(err)
		}
		b.post(test, nil).redirectsTo(t, "/app/workflows/"+id)
		page = html.UnescapeString(b.get("/app/workflows/"+id).expect(t, http.StatusOK).body)
		if !strings.Contains(page, "The test email of action 1 was not sent: the mail server could not be reached or refused the message.") {
			t.Fatalf("no failure notice: %s", text(page))
		}
		if n := len(srv.Messages()); n != 1 {
			t.Fatalf("%d messages after the refused test", n)
		}
		b.post("/app/workflows/"+id+"/actions/act_missing/test", nil).redirectsTo(t, "/app/workflows/"+id)
	})
}
