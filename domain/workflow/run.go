package workflow

import (
	"fmt"
	"time"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/retry"
)

// RunIDPrefix is the prefix of run IDs (run_…).
const RunIDPrefix = "run"

// RunKind says what started a run: a workflow, or one of the form's notifications.
type RunKind string

// Run kinds: a workflow's run, the owner notification, the respondent confirmation.
const (
	KindWorkflow   RunKind = "workflow"
	KindOwner      RunKind = "owner"
	KindRespondent RunKind = "respondent"
)

// ParseRunKind accepts workflow, owner and respondent.
func ParseRunKind(s string) (RunKind, bool) {
	switch k := RunKind(s); k {
	case KindWorkflow, KindOwner, KindRespondent:
		return k, true
	}
	return "", false
}

// IsNotification reports whether the kind is one of the form's notifications.
func (k RunKind) IsNotification() bool { return k == KindOwner || k == KindRespondent }

// RunStatus is where a run stands.
type RunStatus string

// Run statuses: queued, running, then succeeded or failed.
const (
	RunQueued    RunStatus = "queued"
	RunRunning   RunStatus = "running"
	RunSucceeded RunStatus = "succeeded"
	RunFailed    RunStatus = "failed"
)

// ActionRunStatus is where one action of a run stands.
type ActionRunStatus string

// Action statuses of a run: pending, then succeeded, failed or skipped (after an earlier failure).
const (
	ActionRunPending   ActionRunStatus = "pending"
	ActionRunSucceeded ActionRunStatus = "succeeded"
	ActionRunFailed    ActionRunStatus = "failed"
	ActionRunSkipped   ActionRunStatus = "skipped"
)

// ActionSnapshot is one action as a run copies it from its workflow when the run starts, so
// later edits or the workflow's deletion do not change a run in progress.
type ActionSnapshot struct {
	ActionID string
	Type     string
	Config   map[string]any
}

// ActionRun is one action of a run: its snapshot and its attempts.
type ActionRun struct {
	ActionID string
	Type     string
	// Config is the action's config when the run started (it may hold secrets).
	Config   map[string]any
	Status   ActionRunStatus
	Attempts []retry.Attempt
	// Cycle is the number of attempts made.
	Cycle int
	// NextAttemptAt is when the action is retried, or nil.
	NextAttemptAt *time.Time
}

// AttemptOutcome is what one attempt of an action did, as the run engine saw it.
type AttemptOutcome struct {
	StatusCode int // 0 when no HTTP answer came
	Duration   time.Duration
	Err        error // nil on success
	// Permanent failures are not retried.
	Permanent bool
	// RetryAt, when later than the schedule's next attempt, postpones it (e.g. Retry-After).
	RetryAt time.Time
}

// Run is one execution of a workflow for one event: its actions in order, each retried on the
// delivery schedule; when one is given up, the run fails and later actions are skipped.
type Run struct {
	id            string
	workspaceID   string
	kind          RunKind
	workflowID    string
	formID        string
	submissionID  string
	eventID       string
	eventType     event.Type
	occurredAt    time.Time
	fields        map[string]any
	status        RunStatus
	actions       []ActionRun
	nextAttemptAt *time.Time
	createdAt     time.Time
	updatedAt     time.Time
	finishedAt    *time.Time
	traceParent   string
}

// NewRun queues a run of wf's current actions for e, due at once.
func NewRun(id string, wf *Workflow, e event.Event, now time.Time) *Run {
	actions := wf.Actions()
	snaps := make([]ActionSnapshot, len(actions))
	for i, a := range actions {
		snaps[i] = ActionSnapshot{ActionID: a.ID, Type: a.Type, Config: a.Config}
	}
	return StartRun(id, wf.WorkspaceID(), wf.ID(), snaps, e, now)
}

// StartRun queues a run of the given actions for e, due at once. It copies the actions and the
// event's submitted values (the fallback when the submission is deleted before the run ends).
func StartRun(id, workspaceID, workflowID string, actions []ActionSnapshot, e event.Event, now time.Time) *Run {
	now = now.UTC()
	r := &Run{id: id, workspaceID: workspaceID, kind: KindWorkflow, workflowID: workflowID, formID: e.FormID, eventID: e.ID, eventType: e.Type,
		occurredAt: e.OccurredAt.UTC(), fields: EventFields(e), status: RunQueued, createdAt: now, updatedAt: now,
		traceParent: e.TraceParent}
	if s, ok := e.Data["submission_id"].(string); ok {
		r.submissionID = s
	}
	for _, a := range actions {
		r.actions = append(r.actions, ActionRun{ActionID: a.ActionID, Type: a.Type, Config: copyConfig(a.Config), Status: ActionRunPending})
	}
	if len(r.actions) == 0 {
		r.status, r.finishedAt = RunSucceeded, &now
		return r
	}
	r.nextAttemptAt = &now
	return r
}

// StartNotificationRun queues a run of one of a form's notifications (kind owner or
// respondent) for e: a run without workflow whose single action is the notification's email.
func StartNotificationRun(id, workspaceID string, kind RunKind, action ActionSnapshot, e event.Event, now time.Time) *Run {
	r := StartRun(id, workspaceID, "", []ActionSnapshot{action}, e, now)
	r.kind = kind
	return r
}

// EventFields returns the submitted values an event carries: field ID to a string or []string.
// Values that went through JSON (Kafka) come back as []any and are turned into []string.
func EventFields(e event.Event) map[string]any {
	out := map[string]any{}
	raw, _ := e.Data["fields"].(map[string]any)
	for k, v := range raw {
		switch v := v.(type) {
		case string:
			out[k] = v
		case []string:
			out[k] = append([]string(nil), v...)
		case []any:
			list := make([]string, 0, len(v))
			for _, x := range v {
				if s, ok := x.(string); ok {
					list = append(list, s)
				}
			}
			out[k] = list
		}
	}
	return out
}

// UnmarshalRunFromDatabase rebuilds a stored run without re-checking it.
func UnmarshalRunFromDatabase(id, workspaceID string, kind RunKind, workflowID, formID, submissionID, eventID string, eventType event.Type,
	occurredAt time.Time, fields map[string]any, status RunStatus, actions []ActionRun, nextAttemptAt *time.Time,
	createdAt, updatedAt time.Time, finishedAt *time.Time) *Run {
	return &Run{id: id, workspaceID: workspaceID, kind: kind, workflowID: workflowID, formID: formID, submissionID: submissionID,
		eventID: eventID, eventType: eventType, occurredAt: occurredAt.UTC(), fields: fields, status: status, actions: actions,
		nextAttemptAt: nextAttemptAt, createdAt: createdAt.UTC(), updatedAt: updatedAt.UTC(), finishedAt: finishedAt}
}

// TraceParent is the W3C trace context of the event that started the run ("" when not traced).
func (r *Run) TraceParent() string { return r.traceParent }

// RestoreTraceParent sets the stored trace context on a run rebuilt from the database.
func (r *Run) RestoreTraceParent(traceParent string) { r.traceParent = traceParent }

// Finished tells whether the run succeeded or failed.
func (r *Run) Finished() bool { return r.status == RunSucceeded || r.status == RunFailed }

// Current returns the index of the action to attempt next; ok is false when the run is finished.
func (r *Run) Current() (int, bool) {
	if r.Finished() {
		return 0, false
	}
	for i, a := range r.actions {
		if a.Status == ActionRunPending {
			return i, true
		}
	}
	return 0, false
}

// NextAttemptNumber is the number the current action's next attempt carries (1-based).
func (r *Run) NextAttemptNumber() int {
	i, ok := r.Current()
	if !ok {
		return 0
	}
	return r.actions[i].Cycle + 1
}

// Record adds the attempt just made of the current action. Success moves on to the next action
// (due at once) or, after the last, succeeds the run. A failure schedules a retry per schedule,
// no earlier than o.RetryAt; a permanent failure, or the failure after the last delay, fails the
// action and the run, and skips the actions after it.
func (r *Run) Record(o AttemptOutcome, now time.Time, schedule retry.Schedule) {
	i, ok := r.Current()
	if !ok {
		return
	}
	now = now.UTC()
	a := &r.actions[i]
	a.Cycle++
	at := retry.Attempt{Number: a.Cycle, At: now, Duration: o.Duration}
	if o.StatusCode != 0 {
		code := o.StatusCode
		at.StatusCode = &code
	}
	if o.Err != nil {
		msg := o.Err.Error()
		at.Error = &msg
	}
	a.Attempts = append(a.Attempts, at)
	r.status, r.updatedAt = RunRunning, now
	switch {
	case o.Err == nil:
		a.Status, a.NextAttemptAt = ActionRunSucceeded, nil
		if i == len(r.actions)-1 {
			r.finish(RunSucceeded, now)
			return
		}
		r.nextAttemptAt = &now
	default:
		wait, ok := schedule.After(a.Cycle)
		if o.Permanent || !ok {
			a.Status, a.NextAttemptAt = ActionRunFailed, nil
			for j := i + 1; j < len(r.actions); j++ {
				r.actions[j].Status = ActionRunSkipped
			}
			r.finish(RunFailed, now)
			return
		}
		next := now.Add(wait)
		if o.RetryAt.After(next) {
			next = o.RetryAt.UTC()
		}
		a.NextAttemptAt, r.nextAttemptAt = &next, &next
	}
}

func (r *Run) finish(s RunStatus, now time.Time) {
	r.status, r.nextAttemptAt, r.finishedAt = s, nil, &now
}

// ErrRunNotFailed refuses a manual retry of a run that did not fail: a succeeded run has
// nothing left to do, and a queued or running one is still being worked on.
var ErrRunNotFailed = domain.Conflict("only a failed run can be retried")

// Retry is a manual replay of a failed run: the action that failed gets a new cycle of
// attempts (numbered from 1 again, the earlier ones kept in its log), due at once, and the
// actions it skipped run after it as usual. Actions that succeeded are not run again. A run
// that did not fail gives ErrRunNotFailed and is left as it is.
func (r *Run) Retry(now time.Time) error {
	if r.status != RunFailed {
		return fmt.Errorf("%w (this run is %s)", ErrRunNotFailed, r.status)
	}
	now = now.UTC()
	for i := range r.actions {
		a := &r.actions[i]
		switch a.Status {
		case ActionRunFailed:
			a.Status, a.Cycle, a.NextAttemptAt = ActionRunPending, 0, &now
		case ActionRunSkipped:
			a.Status = ActionRunPending
		}
	}
	r.status, r.nextAttemptAt, r.finishedAt, r.updatedAt = RunQueued, &now, nil, now
	return nil
}

// Postpone moves the current action's next attempt without using one (an open circuit breaker
// refused it).
func (r *Run) Postpone(until time.Time) {
	i, ok := r.Current()
	if !ok {
		return
	}
	u := until.UTC()
	r.actions[i].NextAttemptAt, r.nextAttemptAt = &u, &u
}

// ID returns the run ID.
func (r *Run) ID() string { return r.id }

// WorkspaceID returns the owning workspace.
func (r *Run) WorkspaceID() string { return r.workspaceID }

// Kind returns what started the run: a workflow or a notification of the form.
func (r *Run) Kind() RunKind { return r.kind }

// WorkflowID returns the workflow that started the run (it may have been deleted since); it is
// empty for a notification run.
func (r *Run) WorkflowID() string { return r.workflowID }

// FormID returns the event's form.
func (r *Run) FormID() string { return r.formID }

// SubmissionID returns the submission the event is about.
func (r *Run) SubmissionID() string { return r.submissionID }

// EventID returns the event that started the run.
func (r *Run) EventID() string { return r.eventID }

// EventType returns the event's type.
func (r *Run) EventType() event.Type { return r.eventType }

// OccurredAt returns when the event happened.
func (r *Run) OccurredAt() time.Time { return r.occurredAt }

// Fields returns the submitted values the event carried (field ID to string or []string).
func (r *Run) Fields() map[string]any { return r.fields }

// Status returns the run status.
func (r *Run) Status() RunStatus { return r.status }

// Actions returns the run's actions in order; the copy may be read freely.
func (r *Run) Actions() []ActionRun {
	out := make([]ActionRun, len(r.actions))
	for i, a := range r.actions {
		a.Attempts = append([]retry.Attempt(nil), a.Attempts...)
		out[i] = a
	}
	return out
}

// NextAttemptAt returns when the run is due next, or nil when it is finished.
func (r *Run) NextAttemptAt() *time.Time { return r.nextAttemptAt }

// CreatedAt returns the creation time.
func (r *Run) CreatedAt() time.Time { return r.createdAt }

// UpdatedAt returns the time of the last change.
func (r *Run) UpdatedAt() time.Time { return r.updatedAt }

// FinishedAt returns when the run succeeded or failed, or nil.
func (r *Run) FinishedAt() *time.Time { return r.finishedAt }

// copyConfig copies a config deeply enough that later edits of the workflow's maps and lists
// do not reach the run.
func copyConfig(c map[string]any) map[string]any {
	if c == nil {
		return map[string]any{}
	}
	out := make(map[string]any, len(c))
	for k, v := range c {
		out[k] = copyValue(v)
	}
	return out
}

func copyValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		return copyConfig(v)
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = copyValue(x)
		}
		return out
	case []string:
		return append([]string(nil), v...)
	case map[string]string:
		out := make(map[string]string, len(v))
		for k, x := range v {
			out[k] = x
		}
		return out
	}
	return v
}
