package workflows_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/formward/formward/application/apptest"
	"github.com/formward/formward/application/auth"
	workflowsapp "github.com/formward/formward/application/workflows"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/apikey"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/integration"
	"github.com/formward/formward/domain/retry"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/domain/workflow"
	"github.com/formward/formward/ports"
	"github.com/formward/formward/test/testkit"
)

// scriptedRunner answers with the scripted outcomes in turn (success when none is left) and
// records every input.
type scriptedRunner struct {
	typ, integ string
	mu         sync.Mutex
	script     []ports.ActionOutcome
	calls      []ports.ActionInput
	log        *[]string
}

func (s *scriptedRunner) Type() string                                    { return s.typ }
func (s *scriptedRunner) Integration() string                             { return s.integ }
func (s *scriptedRunner) Validate(map[string]any) []ports.ConfigViolation { return nil }
func (s *scriptedRunner) Run(_ context.Context, in ports.ActionInput) ports.ActionOutcome {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, in)
	if s.log != nil {
		*s.log = append(*s.log, in.ActionID)
	}
	if len(s.script) == 0 {
		return ports.ActionOutcome{StatusCode: 200}
	}
	o := s.script[0]
	s.script = s.script[1:]
	return o
}

type runsWorld struct {
	clock        *apptest.Clock
	ids          *apptest.IDs
	forms        *apptest.Forms
	submissions  *apptest.Submissions
	workflows    *apptest.Workflows
	runs         *apptest.Runs
	integrations *apptest.Integrations
	runners      map[string]*scriptedRunner
	order        []string
	form         *form.Form
	sub          *submission.Submission
	starter      *workflowsapp.RunStarter
	engine       *workflowsapp.RunEngine
}

var runsT0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// testDelays is a short schedule: three attempts per action.
var testDelays = []time.Duration{time.Second, 2 * time.Second}

var testSchedule = func() retry.Schedule {
	s, err := retry.New(testDelays...)
	if err != nil {
		panic(err)
	}
	return s
}()

func newRunsWorld(t *testing.T) *runsWorld {
	t.Helper()
	st := apptest.NewStore()
	w := &runsWorld{clock: &apptest.Clock{At: runsT0}, ids: &apptest.IDs{}, forms: st.Forms,
		submissions: st.Submissions, workflows: st.Workflows, runs: st.Runs, integrations: st.Integrations,
		runners: map[string]*scriptedRunner{}}
	f, err := form.New("frm_1", "wsp_a", form.Draft{Name: "Leads", Fields: []form.FieldSpec{
		{Label: "Budget", Type: "number"}, {Label: "Email", Type: "email"}, {Label: "Topics", Type: "checkbox", Options: []string{"a", "b"}},
	}}, func() string { return w.ids.New("fld") }, form.DefaultLimits, runsT0)
	if err != nil {
		t.Fatal(err)
	}
	w.form = f
	_ = w.forms.Create(context.Background(), f)
	fs := f.Fields()
	s, err := submission.New("sub_1", f, map[string]submission.Input{fs[0].ID: "1500", fs[1].ID: "x@example.com", fs[2].ID: []any{"a", "b"}},
		submission.Metadata{Source: "api"}, runsT0)
	if err != nil {
		t.Fatal(err)
	}
	w.sub = s
	_ = w.submissions.Add(context.Background(), s, event.Event{})
	runners := map[string]ports.ActionRunner{}
	for _, typ := range []string{"send_webhook", "automation_trigger", "chat_message"} {
		r := &scriptedRunner{typ: typ, log: &w.order}
		if typ == "chat_message" {
			r.integ = "slack"
		}
		w.runners[typ] = r
		runners[typ] = r
	}
	w.starter = workflowsapp.NewRunStarter(w.workflows, w.forms, w.runs, w.ids, w.clock, nil)
	w.engine = workflowsapp.NewRunEngine(workflowsapp.RunEngineDeps{Runs: w.runs, Forms: w.forms, Submissions: w.submissions,
		Integrations: w.integrations, Clock: w.clock}, runners, workflowsapp.RunEngineConfig{Retry: testSchedule}, nil)
	return w
}

// addWorkflow stores an enabled workflow of the form on submission.created with the given
// action types (configs name the type) and conditions.
func (w *runsWorld) addWorkflow(t *testing.T, types []string, conds ...workflow.ConditionSpec) *workflow.Workflow {
	t.Helper()
	var actions []workflow.ActionSpec
	for _, typ := range types {
		actions = append(actions, workflow.ActionSpec{Type: typ, Config: map[string]any{"url": "https://x.example/" + typ, "text": "Budget {{" + w.form.Fields()[0].ID + "}} from {{form_name}}"}})
	}
	wf, err := workflow.New(w.ids.New("wfl"), "wsp_a", workflow.Draft{Name: "Route", FormID: w.form.ID(),
		Trigger: workflow.TriggerSpec{Type: "submission.created", Conditions: conds}, Actions: actions},
		func() string { return w.ids.New("act") }, nil, workflow.DefaultLimits, runsT0)
	if err != nil {
		t.Fatal(err)
	}
	_ = w.workflows.Create(context.Background(), wf)
	return wf
}

func (w *runsWorld) event() event.Event {
	return event.ForSubmission("evt_1", event.SubmissionCreated, w.sub, runsT0)
}

// drain advances every due run, moving the clock to the next due time, until none is due.
func (w *runsWorld) drain(t *testing.T) {
	t.Helper()
	for range 100 {
		rs, _ := w.runs.ClaimDue(context.Background(), ports.Claim{Now: w.clock.At, Limit: 100, Lease: time.Minute})
		if len(rs) == 0 {
			var next *time.Time
			for _, r := range w.runs.All() {
				if n := r.NextAttemptAt(); n != nil && (next == nil || n.Before(*next)) {
					next = n
				}
			}
			if next == nil {
				return
			}
			w.clock.At = *next
			continue
		}
		for _, r := range rs {
			w.engine.Advance(context.Background(), r)
		}
	}
	t.Fatal("runs never finished")
}

func actionStatuses(r *workflow.Run) string {
	var out []string
	for _, a := range r.Actions() {
		out = append(out, fmt.Sprintf("%s:%d", a.Status, len(a.Attempts)))
	}
	return strings.Join(out, ",")
}

func TestRunsExecuteActionsInOrder(t *testing.T) {
	w := newRunsWorld(t)
	w.addWorkflow(t, []string{"send_webhook", "automation_trigger", "send_webhook"})
	if err := w.starter.HandleBatch(context.Background(), []event.Event{w.event()}); err != nil {
		t.Fatal(err)
	}
	w.drain(t)
	rs := w.runs.All()
	if len(rs) != 1 || rs[0].Status() != workflow.RunSucceeded || actionStatuses(rs[0]) != "succeeded:1,succeeded:1,succeeded:1" {
		t.Fatalf("runs %d, %s", len(rs), actionStatuses(rs[0]))
	}
	acts := rs[0].Actions()
	if len(w.order) != 3 || w.order[0] != acts[0].ActionID || w.order[1] != acts[1].ActionID || w.order[2] != acts[2].ActionID {
		t.Fatalf("order %v", w.order)
	}
	if !w.clock.At.Equal(runsT0) {
		t.Fatal("successful actions waited")
	}
	// The input: submission values, labels, form name, rendered templates.
	in := w.runners["automation_trigger"].calls[0]
	fs := w.form.Fields()
	if in.FormName != "Leads" || in.SubmissionID != "sub_1" || in.Fields[fs[0].ID] != "1500" || in.Labels[fs[2].ID] != "Topics" ||
		in.Attempt != 1 || in.Event != "submission.created" || in.RunID != rs[0].ID() || in.WorkflowID != rs[0].WorkflowID() {
		t.Fatalf("input %+v", in)
	}
	if l, ok := in.Fields[fs[2].ID].([]string); !ok || len(l) != 2 {
		t.Fatalf("list value %#v", in.Fields[fs[2].ID])
	}
	if got := in.Render(in.Config["text"].(string), false); got != "Budget 1500 from Leads" {
		t.Fatalf("render %q", got)
	}
}

func TestRunsRetryFailingActionWhileLaterOnesWait(t *testing.T) {
	w := newRunsWorld(t)
	w.addWorkflow(t, []string{"send_webhook", "automation_trigger"})
	w.runners["send_webhook"].script = []ports.ActionOutcome{{StatusCode: 500, Err: errors.New("answered 500")}, {Err: errors.New("timeout")}}
	_ = w.starter.HandleBatch(context.Background(), []event.Event{w.event()})
	rs, _ := w.runs.ClaimDue(context.Background(), ports.Claim{Now: w.clock.At, Limit: 10, Lease: time.Minute})
	w.engine.Advance(context.Background(), rs[0])
	r := rs[0]
	if r.Status() != workflow.RunRunning || actionStatuses(r) != "pending:1,pending:0" || !r.NextAttemptAt().Equal(runsT0.Add(time.Second)) {
		t.Fatalf("after a failure: %s %s %v", r.Status(), actionStatuses(r), r.NextAttemptAt())
	}
	if len(w.runners["automation_trigger"].calls) != 0 {
		t.Fatal("a later action ran before the failing one succeeded")
	}
	w.drain(t)
	r = w.runs.All()[0]
	if r.Status() != workflow.RunSucceeded || actionStatuses(r) != "succeeded:3,succeeded:1" {
		t.Fatalf("after retries: %s %s", r.Status(), actionStatuses(r))
	}
	if got := w.runners["send_webhook"].calls; got[0].Attempt != 1 || got[2].Attempt != 3 {
		t.Fatalf("attempt numbers %d %d", got[0].Attempt, got[2].Attempt)
	}
	if !w.clock.At.Equal(runsT0.Add(3 * time.Second)) {
		t.Fatalf("schedule: finished at %v", w.clock.At)
	}
}

func TestRunsGiveUpFailsRunAndSkipsLaterActions(t *testing.T) {
	w := newRunsWorld(t)
	w.addWorkflow(t, []string{"automation_trigger", "send_webhook", "automation_trigger"})
	fail := ports.ActionOutcome{StatusCode: 503, Err: errors.New("answered 503")}
	w.runners["send_webhook"].script = []ports.ActionOutcome{fail, fail, fail, fail}
	_ = w.starter.HandleBatch(context.Background(), []event.Event{w.event()})
	w.drain(t)
	r := w.runs.All()[0]
	if r.Status() != workflow.RunFailed || actionStatuses(r) != "succeeded:1,failed:3,skipped:0" || r.FinishedAt() == nil {
		t.Fatalf("%s %s", r.Status(), actionStatuses(r))
	}
	if n := len(w.runners["automation_trigger"].calls); n != 1 {
		t.Fatalf("the skipped action ran: %d calls", n)
	}
}

// A failed run retried by hand is claimed by the engine again: the failed action gets a new
// cycle of attempts, the skipped ones run after it, the one that succeeded does not run again.
// Only a failed run of the workflow can be retried.
func TestRetryRunRunsTheFailedRunAgain(t *testing.T) {
	w := newRunsWorld(t)
	wf := w.addWorkflow(t, []string{"automation_trigger", "send_webhook", "automation_trigger"})
	other := w.addWorkflow(t, []string{"automation_trigger"})
	fail := ports.ActionOutcome{StatusCode: 503, Err: errors.New("answered 503")}
	w.runners["send_webhook"].script = []ports.ActionOutcome{fail, fail, fail}
	_ = w.starter.HandleBatch(context.Background(), []event.Event{w.event()})
	w.drain(t)
	var failed, succeeded *workflow.Run
	for _, r := range w.runs.All() {
		if r.WorkflowID() == wf.ID() {
			failed = r
		} else {
			succeeded = r
		}
	}
	if failed == nil || failed.Status() != workflow.RunFailed || actionStatuses(failed) != "succeeded:1,failed:3,skipped:0" {
		t.Fatalf("before the retry: %v", failed)
	}
	if succeeded == nil || succeeded.Status() != workflow.RunSucceeded {
		t.Fatalf("the other workflow's run: %v", succeeded)
	}

	retry := workflowsapp.NewRetryRunHandler(w.workflows, w.runs, w.clock)
	w.clock.At = w.clock.At.Add(time.Hour)
	if _, err := retry.Handle(apptest.As("wsp_a", apikey.ScopeReadOnly), workflowsapp.RetryRun{WorkflowID: wf.ID(), ID: failed.ID()}); !errors.Is(err, auth.ErrForbidden) {
		t.Fatalf("a read-only key: %v", err)
	}
	for name, c := range map[string]struct {
		ws  string
		cmd workflowsapp.RetryRun
	}{
		"another workspace":     {"wsp_b", workflowsapp.RetryRun{WorkflowID: wf.ID(), ID: failed.ID()}},
		"another workflow":      {"wsp_a", workflowsapp.RetryRun{WorkflowID: other.ID(), ID: failed.ID()}},
		"an unknown run":        {"wsp_a", workflowsapp.RetryRun{WorkflowID: wf.ID(), ID: "run_nope"}},
		"an unknown workflow":   {"wsp_a", workflowsapp.RetryRun{WorkflowID: "wfl_nope", ID: failed.ID()}},
		"another workspace key": {"wsp_b", workflowsapp.RetryRun{WorkflowID: "wfl_nope", ID: failed.ID()}},
	} {
		if _, err := retry.Handle(apptest.As(c.ws, apikey.ScopeAdmin), c.cmd); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("%s: %v, want not found", name, err)
		}
	}
	_, err := retry.Handle(ctx, workflowsapp.RetryRun{WorkflowID: other.ID(), ID: succeeded.ID()})
	if !errors.Is(err, workflow.ErrRunNotFailed) || !errors.Is(err, domain.ErrConflict) {
		t.Fatalf("retry of a succeeded run: %v, want a conflict", err)
	}

	got, err := retry.Handle(ctx, workflowsapp.RetryRun{WorkflowID: wf.ID(), ID: failed.ID()})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status() != workflow.RunQueued || got.NextAttemptAt() == nil || !got.NextAttemptAt().Equal(w.clock.At) || got.FinishedAt() != nil {
		t.Fatalf("after the retry: %s next %v finished %v", got.Status(), got.NextAttemptAt(), got.FinishedAt())
	}
	// Queued again, not yet run: a second retry is refused until it fails again.
	if _, err := retry.Handle(ctx, workflowsapp.RetryRun{WorkflowID: wf.ID(), ID: failed.ID()}); !errors.Is(err, workflow.ErrRunNotFailed) {
		t.Fatalf("retry of a queued run: %v", err)
	}

	// The engine claims it at once and finishes it: the endpoint works now.
	claimed, _ := w.runs.ClaimDue(context.Background(), ports.Claim{Now: w.clock.At, Limit: 10, Lease: time.Minute})
	if len(claimed) != 1 || claimed[0].ID() != failed.ID() {
		t.Fatalf("claimed after the retry: %v", claimed)
	}
	calls := len(w.runners["send_webhook"].calls)
	w.engine.Advance(context.Background(), claimed[0])
	w.drain(t)
	r, _ := w.runs.Get(context.Background(), "wsp_a", failed.ID())
	if r.Status() != workflow.RunSucceeded || actionStatuses(r) != "succeeded:1,succeeded:4,succeeded:1" {
		t.Fatalf("after the engine: %s %s", r.Status(), actionStatuses(r))
	}
	sent := w.runners["send_webhook"].calls[calls:]
	if len(sent) != 1 || sent[0].Attempt != 1 {
		t.Fatalf("the retried action: %d calls, attempt %d", len(sent), sent[0].Attempt)
	}
	if n := len(w.runners["automation_trigger"].calls); n != 3 {
		t.Fatalf("automation_trigger ran %d times, want 3 (the other workflow's, then the first action and the skipped one once each)", n)
	}
}

func TestRunsPermanentFailureAndMissingPieces(t *testing.T) {
	w := newRunsWorld(t)
	w.addWorkflow(t, []string{"send_webhook", "automation_trigger"})
	w.runners["send_webhook"].script = []ports.ActionOutcome{{Err: errors.New("to is not one valid address"), Permanent: true}}
	_ = w.starter.HandleBatch(context.Background(), []event.Event{w.event()})
	w.drain(t)
	r := w.runs.All()[0]
	if r.Status() != workflow.RunFailed || actionStatuses(r) != "failed:1,skipped:0" {
		t.Fatalf("permanent: %s %s", r.Status(), actionStatuses(r))
	}

	// An action needing an integration that is not connected fails at once.
	w2 := newRunsWorld(t)
	w2.addWorkflow(t, []string{"chat_message", "send_webhook"})
	_ = w2.starter.HandleBatch(context.Background(), []event.Event{w2.event()})
	w2.drain(t)
	r = w2.runs.All()[0]
	if r.Status() != workflow.RunFailed || actionStatuses(r) != "failed:1,skipped:0" || len(w2.runners["chat_message"].calls) != 0 {
		t.Fatalf("no integration: %s %s", r.Status(), actionStatuses(r))
	}
	if msg := r.Actions()[0].Attempts[0].Error; msg == nil || *msg != "integration slack is not connected" {
		t.Fatalf("error %v", msg)
	}

	// With the integration connected, its credentials reach the runner.
	w3 := newRunsWorld(t)
	integ, err := integration.New("int_1", "wsp_a", integration.Draft{Type: "slack", Credentials: map[string]string{"bot_token": "xoxb-1"}}, runsT0)
	if err != nil {
		t.Fatal(err)
	}
	_ = w3.integrations.Create(context.Background(), integ)
	w3.addWorkflow(t, []string{"chat_message"})
	_ = w3.starter.HandleBatch(context.Background(), []event.Event{w3.event()})
	w3.drain(t)
	if r := w3.runs.All()[0]; r.Status() != workflow.RunSucceeded || w3.runners["chat_message"].calls[0].Credentials["bot_token"] != "xoxb-1" {
		t.Fatalf("with integration: %s", r.Status())
	}

	// An action type without a runner fails permanently.
	w4 := newRunsWorld(t)
	w4.addWorkflow(t, []string{"send_email", "send_webhook"})
	_ = w4.starter.HandleBatch(context.Background(), []event.Event{w4.event()})
	w4.drain(t)
	if r := w4.runs.All()[0]; r.Status() != workflow.RunFailed || actionStatuses(r) != "failed:1,skipped:0" {
		t.Fatalf("unknown type: %s %s", r.Status(), actionStatuses(r))
	}
}

func TestRunsBreakerRefusalUsesNoAttempt(t *testing.T) {
	w := newRunsWorld(t)
	w.addWorkflow(t, []string{"send_webhook"})
	w.runners["send_webhook"].script = []ports.ActionOutcome{{BreakerOpen: true, Err: errors.New("breaker open"), RetryAt: runsT0.Add(30 * time.Second)}}
	_ = w.starter.HandleBatch(context.Background(), []event.Event{w.event()})
	w.drain(t)
	r := w.runs.All()[0]
	if r.Status() != workflow.RunSucceeded || actionStatuses(r) != "succeeded:1" || !w.clock.At.Equal(runsT0.Add(30*time.Second)) {
		t.Fatalf("%s %s at %v", r.Status(), actionStatuses(r), w.clock.At)
	}
	if calls := w.runners["send_webhook"].calls; calls[1].Attempt != 1 {
		t.Fatalf("breaker refusal used an attempt: %d", calls[1].Attempt)
	}
}

func TestRunsStartOnlyForMatchingEnabledWorkflows(t *testing.T) {
	w := newRunsWorld(t)
	budget := w.form.Fields()[0].ID
	match := w.addWorkflow(t, []string{"send_webhook"}, workflow.ConditionSpec{FieldID: budget, Operator: "greater_than", Value: 1000.0, HasValue: true})
	w.addWorkflow(t, []string{"send_webhook"}, workflow.ConditionSpec{FieldID: budget, Operator: "less_than", Value: 1000.0, HasValue: true})
	disabled := w.addWorkflow(t, []string{"send_webhook"})
	off := false
	if err := disabled.Apply(workflow.Patch{Enabled: &off}, nil, nil, workflow.DefaultLimits, runsT0); err != nil {
		t.Fatal(err)
	}
	e := w.event()
	other := e
	other.ID, other.Type = "evt_2", event.FormPublished
	if err := w.starter.HandleBatch(context.Background(), []event.Event{e, other}); err != nil {
		t.Fatal(err)
	}
	// A redelivered event starts no second run.
	if err := w.starter.HandleBatch(context.Background(), []event.Event{e}); err != nil {
		t.Fatal(err)
	}
	rs := w.runs.All()
	if len(rs) != 1 || rs[0].WorkflowID() != match.ID() || rs[0].EventID() != "evt_1" || rs[0].SubmissionID() != "sub_1" {
		t.Fatalf("runs: %d", len(rs))
	}
	// Re-enabled later: events of the disabled time never run it, even redelivered; events
	// after the re-enable do.
	on := true
	_ = disabled.Apply(workflow.Patch{Enabled: &on}, nil, nil, workflow.DefaultLimits, e.OccurredAt.Add(time.Minute))
	_ = w.starter.HandleBatch(context.Background(), []event.Event{e})
	if n := len(w.runs.All()); n != 1 {
		t.Fatalf("runs after re-enable for an event of the disabled time: %d, want 1", n)
	}
	later := e
	later.ID, later.OccurredAt = "evt_3", e.OccurredAt.Add(2*time.Minute)
	_ = w.starter.HandleBatch(context.Background(), []event.Event{later})
	if n := len(w.runs.All()); n != 3 {
		t.Fatalf("runs after a new event: %d, want 3 (both enabled workflows that match)", n)
	}

	// A storage failure asks for the batch again.
	w.runs.AddErr = errors.New("db down")
	if err := w.starter.HandleBatch(context.Background(), []event.Event{e}); err == nil {
		t.Fatal("storage failure swallowed")
	}
}

func TestRunsOfDeletedWorkflowFinish(t *testing.T) {
	w := newRunsWorld(t)
	wf := w.addWorkflow(t, []string{"send_webhook", "automation_trigger"})
	w.runners["send_webhook"].script = []ports.ActionOutcome{{Err: errors.New("down")}}
	_ = w.starter.HandleBatch(context.Background(), []event.Event{w.event()})
	rs, _ := w.runs.ClaimDue(context.Background(), ports.Claim{Now: w.clock.At, Limit: 10, Lease: time.Minute})
	w.engine.Advance(context.Background(), rs[0])
	// The workflow, and even the submission, are deleted while the run waits for its retry.
	_ = w.workflows.Delete(context.Background(), "wsp_a", wf.ID())
	_ = w.submissions.Delete(context.Background(), "wsp_a", w.form.ID(), "sub_1")
	w.drain(t)
	r := w.runs.All()[0]
	if r.Status() != workflow.RunSucceeded || actionStatuses(r) != "succeeded:2,succeeded:1" {
		t.Fatalf("%s %s", r.Status(), actionStatuses(r))
	}
	// The event's values stand in for the deleted submission.
	in := w.runners["automation_trigger"].calls[0]
	if in.Fields[w.form.Fields()[0].ID] != "1500" || in.Render("{{"+w.form.Fields()[0].ID+"}}", false) != "1500" {
		t.Fatalf("fallback values %v", in.Fields)
	}
	// The list query 404s for the deleted workflow.
	_, _, err := workflowsapp.NewListRunsHandler(w.workflows, w.runs).Handle(apptest.As("wsp_a", apikey.ScopeReadOnly), workflowsapp.ListRuns{WorkflowID: wf.ID(), Page: ports.Page{Limit: 10}})
	if !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("list runs of deleted workflow: %v", err)
	}
}

func TestRunEngineRunsInBackground(t *testing.T) {
	w := newRunsWorld(t)
	w.addWorkflow(t, []string{"send_webhook", "automation_trigger"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = w.engine.Run(ctx); close(done) }()
	_ = w.starter.HandleBatch(ctx, []event.Event{w.event()})
	w.engine.Notify()
	testkit.Eventually(t, 0, func() bool {
		tr := w.runners["automation_trigger"]
		tr.mu.Lock()
		defer tr.mu.Unlock()
		return len(tr.calls) > 0
	}, "the automation trigger called")
	cancel()
	<-done
	ids := []string{}
	for _, r := range w.runs.All() {
		ids = append(ids, string(r.Status()))
	}
	sort.Strings(ids)
	if len(ids) != 1 || ids[0] != "succeeded" {
		t.Fatalf("runs %v", ids)
	}
}
