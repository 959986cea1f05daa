package workflows

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/formward/formward/application/dispatch"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/retry"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/domain/workflow"
	"github.com/formward/formward/ports"
)

// RunEngineConfig tunes the run engine. Zero fields take the defaults.
type RunEngineConfig struct {
	// Retry is the wait after each failed attempt of an action (default
	// retry.Default, the delivery schedule); the failure after the last gives it up.
	Retry retry.Schedule
	// Concurrency is how many runs advance at once (default 16).
	Concurrency int
	// PerWorkspace is how many of them may belong to one workspace (default 4), so actions that
	// hang in one workspace leave the other slots to the other workspaces.
	PerWorkspace int
	// ClaimBatch is the most runs claimed at once (default Concurrency).
	ClaimBatch int
	// Timeout bounds one attempt of an action (default 30s); it sets ClaimLease's default.
	Timeout time.Duration
	// ClaimLease is how long a claimed run is hidden from other engines (default 2×Timeout+5s);
	// the engine renews it after every action.
	ClaimLease time.Duration
	// PollInterval is how long an idle engine waits before claiming again (default 100ms).
	PollInterval time.Duration
}

func (c RunEngineConfig) withDefaults() RunEngineConfig {
	if c.Timeout <= 0 {
		c.Timeout = 30 * time.Second
	}
	if c.ClaimLease <= 0 {
		c.ClaimLease = 2*c.Timeout + 5*time.Second
	}
	return c
}

// RunObserver hears what the run engine does, for logs and metrics. It never sees configs or values.
type RunObserver interface {
	// Attempted is called after an attempt of an action was made (or refused by a breaker) and recorded.
	Attempted(r *workflow.Run, action workflow.ActionRun, o ports.ActionOutcome)
	// Failed is called when a step failed; the engine retries it by itself.
	Failed(step string, err error)
}

// The steps a run engine reports to RunObserver.Failed.
const (
	RunStepClaim       = "claim due runs"
	RunStepLoadSubject = "load run subject"
	RunStepSave        = "save run"
)

// RunSteps lists every step a run engine may report as failed.
func RunSteps() []string {
	return []string{RunStepClaim, RunStepLoadSubject, RunStepSave}
}

// NopRunObserver ignores everything.
type NopRunObserver struct{}

func (NopRunObserver) Attempted(*workflow.Run, workflow.ActionRun, ports.ActionOutcome) {}
func (NopRunObserver) Failed(string, error)                                             {}

// RunEngineDeps are the ports the run engine reads.
type RunEngineDeps struct {
	Runs         ports.RunRepository
	Forms        ports.FormRepository
	Submissions  ports.SubmissionRepository
	Integrations ports.IntegrationRepository
	Clock        ports.Clock
	// Files signs the file links of owner notifications; nil shows file values as stored.
	Files ports.FileLinker
}

// RunEngine advances due runs: it executes each run's current action through the runner of its
// type, records the attempt, and goes on to the next action at once when it succeeded. A failed
// action is retried per the retry schedule while later actions wait; when it is given up the run
// fails. Schedules live in the database and several engines may run at once (ClaimDue leases).
// Workspaces share the engine fairly (see dispatcher).
type RunEngine struct {
	d        RunEngineDeps
	runners  map[string]ports.ActionRunner
	cfg      RunEngineConfig
	observer RunObserver
	loop     *dispatch.Dispatcher[*workflow.Run]
}

// NewRunEngine makes an engine over the registered runners (by type); observer may be nil.
func NewRunEngine(d RunEngineDeps, runners map[string]ports.ActionRunner, cfg RunEngineConfig, observer RunObserver) *RunEngine {
	if observer == nil {
		observer = NopRunObserver{}
	}
	e := &RunEngine{d: d, runners: runners, cfg: cfg.withDefaults(), observer: observer}
	e.loop = dispatch.NewDispatcher(dispatch.DispatchConfig{Concurrency: e.cfg.Concurrency, PerWorkspace: e.cfg.PerWorkspace,
		ClaimBatch: e.cfg.ClaimBatch, Lease: e.cfg.ClaimLease, PollInterval: e.cfg.PollInterval}, d.Clock,
		d.Runs.ClaimDue,
		func(r *workflow.Run) (string, string) { return r.WorkspaceID(), "" },
		e.Advance,
		func(err error) { observer.Failed(RunStepClaim, err) })
	return e
}

// Notify wakes an idle engine at once, e.g. after the run starter stored runs. It never blocks.
func (e *RunEngine) Notify() { e.loop.Notify() }

// Run claims and advances due runs until ctx ends, then waits for the runs in flight and
// returns nil. Storage failures are reported to the observer and retried after a poll interval.
func (e *RunEngine) Run(ctx context.Context) error {
	e.loop.Run(ctx)
	return nil
}

// Advance executes a claimed run's current action and, while actions succeed, the ones after
// it, saving the run after each attempt. It stops at a failure (the retry is scheduled), at the
// end of the run, or when ctx ends.
func (e *RunEngine) Advance(ctx context.Context, r *workflow.Run) {
	var subject *runSubject
	for ctx.Err() == nil {
		i, ok := r.Current()
		if !ok {
			return
		}
		if subject == nil {
			s, err := e.loadSubject(ctx, r)
			if err != nil {
				if ctx.Err() == nil {
					e.observer.Failed(RunStepLoadSubject, err)
				}
				return // the lease runs out and the run is claimed again
			}
			subject = s
		}
		action := r.Actions()[i]
		out, stopped := e.execute(ctx, r, action, subject)
		if stopped {
			return // stopped mid-attempt: not the destination's fault; the lease runs out and it is tried again
		}
		now := e.d.Clock.Now()
		if out.BreakerOpen {
			until := out.RetryAt
			if until.Before(now) {
				until = now.Add(time.Second)
			}
			r.Postpone(until)
		} else {
			r.Record(workflow.AttemptOutcome{StatusCode: out.StatusCode, Duration: out.Duration, Err: out.Err,
				Permanent: out.Permanent, RetryAt: out.RetryAt}, now, e.cfg.Retry)
		}
		_, more := r.Current()
		moveOn := more && out.Err == nil && !out.BreakerOpen
		if moveOn {
			// Keep the run hidden from other engines while this one goes on with the next action.
			r.Postpone(now.Add(e.cfg.ClaimLease))
		}
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		err := e.d.Runs.Save(sctx, r)
		cancel()
		if err != nil {
			if !errors.Is(err, domain.ErrNotFound) {
				e.observer.Failed(RunStepSave, err)
			}
			return
		}
		e.observer.Attempted(r, r.Actions()[i], out)
		if !moveOn {
			return
		}
	}
}

// execute makes one attempt of action; stopped is true when ctx ended during it.
func (e *RunEngine) execute(ctx context.Context, r *workflow.Run, action workflow.ActionRun, s *runSubject) (out ports.ActionOutcome, stopped bool) {
	runner, ok := e.runners[action.Type]
	if !ok {
		return ports.ActionOutcome{Err: fmt.Errorf("action type %q is not available", action.Type), Permanent: true}, false
	}
	in := ports.ActionInput{
		WorkspaceID: r.WorkspaceID(), WorkflowID: r.WorkflowID(), RunID: r.ID(), ActionID: action.ActionID,
		Attempt: action.Cycle + 1, Event: string(r.EventType()), Config: action.Config,
		FormID: r.FormID(), FormName: s.formName, SubmissionID: r.SubmissionID(), SubmittedAt: s.submittedAt,
		Fields: s.fields, Labels: s.labels, IPHash: s.ipHash, UserAgent: s.userAgent, Referrer: s.referrer,
		Render: s.render, TraceParent: r.TraceParent(),
	}
	if r.Kind().IsNotification() {
		in.Notification = string(r.Kind())
	}
	if r.Kind() == workflow.KindOwner {
		in.Answers, in.ReplyTo, in.Subject = notificationInput(r, s, e.d.Files, e.d.Clock.Now())
	}
	if typ := runner.Integration(); typ != "" {
		integ, err := e.d.Integrations.OfType(ctx, r.WorkspaceID(), typ)
		switch {
		case errors.Is(err, domain.ErrNotFound):
			return ports.ActionOutcome{Err: fmt.Errorf("integration %s is not connected", typ), Permanent: true}, false
		case err != nil:
			if ctx.Err() != nil {
				return ports.ActionOutcome{}, true
			}
			return ports.ActionOutcome{Err: fmt.Errorf("load integration %s: %w", typ, err)}, false
		}
		in.Credentials = integ.Credentials()
	}
	actx, cancel := context.WithTimeout(ctx, e.cfg.Timeout)
	defer cancel()
	out = runner.Run(actx, in)
	if out.Err != nil && ctx.Err() != nil {
		return out, true
	}
	return out, false
}

// runSubject is what the actions of a run read about its submission and form.
type runSubject struct {
	formName                    string
	submittedAt                 time.Time
	fields                      map[string]any
	labels                      map[string]string
	ipHash, userAgent, referrer *string
	render                      func(template string, html bool) string
	// formFields are the form's fields in order (none when the form is gone), values the answers,
	// metadata the submission's (notifications read them).
	formFields []form.Field
	values     map[string]submission.Value
	metadata   submission.Metadata
}

// loadSubject reads the submission (its current values; the event's when it was deleted) and
// the form (name and labels; empty when it was deleted).
func (e *RunEngine) loadSubject(ctx context.Context, r *workflow.Run) (*runSubject, error) {
	s := &runSubject{labels: map[string]string{}, submittedAt: r.OccurredAt()}
	values := map[string]submission.Value{}
	sub, err := e.d.Submissions.Get(ctx, r.WorkspaceID(), r.FormID(), r.SubmissionID())
	switch {
	case errors.Is(err, domain.ErrNotFound):
		s.fields = r.Fields()
		for k, v := range r.Fields() {
			switch v := v.(type) {
			case string:
				values[k] = submission.Single(v)
			case []string:
				values[k] = submission.List(v)
			}
		}
	case err != nil:
		return nil, fmt.Errorf("load submission %s: %w", r.SubmissionID(), err)
	default:
		s.fields = map[string]any{}
		for k, v := range sub.Data() {
			values[k] = v
			if v.IsList() {
				s.fields[k] = v.Strings()
			} else {
				s.fields[k] = v.String()
			}
		}
		s.submittedAt = sub.SubmittedAt()
		m := sub.Metadata()
		s.ipHash, s.userAgent, s.referrer = m.IPHash, m.UserAgent, m.Referrer
		s.metadata = m
	}
	var f *form.Form
	f, err = e.d.Forms.Get(ctx, r.WorkspaceID(), r.FormID())
	switch {
	case errors.Is(err, domain.ErrNotFound):
	case err != nil:
		return nil, fmt.Errorf("load form %s: %w", r.FormID(), err)
	default:
		s.formName = f.Name()
		s.formFields = f.Fields()
		for _, fl := range s.formFields {
			s.labels[fl.ID] = fl.Label
		}
	}
	s.values = values
	vars := workflow.TemplateVars(values, r.SubmissionID(), r.FormID(), s.formName, s.submittedAt)
	workflow.AddScore(vars, s.metadata.Score)
	if f != nil {
		workflow.AddFieldKeys(vars, f.Fields())
	}
	s.render = func(template string, html bool) string { return workflow.Render(template, vars, html) }
	return s, nil
}
