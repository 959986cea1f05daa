package workflows

import (
	"context"
	"fmt"

	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/access"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/workflow"
	"github.com/formward/formward/ports"
)

// PrefixRun is the prefix of run IDs.
const PrefixRun = workflow.RunIDPrefix

// RunStarter turns submission events into runs: one per enabled workflow of the form whose
// trigger matches, and on submission.created one per enabled notification of the form (the
// owner email, the respondent confirmation). It runs in the worker next to the fan-out, fed by
// the same batches.
type RunStarter struct {
	workflows ports.WorkflowRepository
	forms     ports.FormRepository
	runs      ports.RunRepository
	ids       ports.IDs
	clock     ports.Clock
	// notify, when set, is called after runs were stored (wakes a run engine).
	notify func()
}

// NewRunStarter makes the run starter; forms are read for their notification settings; notify
// may be nil.
func NewRunStarter(workflows ports.WorkflowRepository, forms ports.FormRepository, runs ports.RunRepository, ids ports.IDs, clock ports.Clock, notify func()) *RunStarter {
	return &RunStarter{workflows: workflows, forms: forms, runs: runs, ids: ids, clock: clock, notify: notify}
}

// HandleBatch stores the runs of several events in one write. An error asks for the whole
// batch again; runs already stored are skipped then (one run per workflow and event, one per
// notification kind, form and event).
func (s *RunStarter) HandleBatch(ctx context.Context, events []event.Event) error {
	now := s.clock.Now()
	var rs []*workflow.Run
	forms := &formsOfBatch{forms: s.forms, seen: map[string]*form.Form{}}
	// One read of a form's workflows per event type and batch, not one per event: a batch of
	// captures to one form asked the same question hundreds of times.
	matching := map[string][]*workflow.Workflow{}
	for _, e := range events {
		if e.Type != event.SubmissionCreated && e.Type != event.SubmissionUpdated {
			continue
		}
		if e.Type == event.SubmissionCreated {
			f, err := forms.get(ctx, e.WorkspaceID, e.FormID)
			if err != nil {
				return fmt.Errorf("start runs of %s: read form: %w", e.ID, err)
			}
			if f != nil {
				rs = append(rs, notificationRuns(s.ids, f, e, now)...)
			}
		}
		key := e.WorkspaceID + "/" + e.FormID + "/" + string(e.Type)
		wfs, seen := matching[key]
		if !seen {
			var err error
			if wfs, err = s.workflows.Matching(ctx, e); err != nil {
				return fmt.Errorf("start runs of %s: find workflows: %w", e.ID, err)
			}
			matching[key] = wfs
		}
		if len(wfs) == 0 {
			continue
		}
		values := workflow.FieldValues(e)
		for _, wf := range wfs {
			if wf.Matches(e, values) {
				rs = append(rs, workflow.NewRun(s.ids.New(PrefixRun), wf, e, now))
			}
		}
	}
	if len(rs) == 0 {
		return nil
	}
	if err := s.runs.AddAll(ctx, rs); err != nil {
		return fmt.Errorf("start runs of %d events from %s: store runs: %w", len(events), events[0].ID, err)
	}
	if s.notify != nil {
		s.notify()
	}
	return nil
}

// EventHandlers hands each batch to several handlers in order (the fan-out, then the run
// starter). The first error asks for the batch again; every handler tolerates events it
// already handled, so the ones before it do no work twice.
type EventHandlers []ports.EventBatchHandler

// HandleBatch calls every handler with events.
func (hs EventHandlers) HandleBatch(ctx context.Context, events []event.Event) error {
	for _, h := range hs {
		if err := h(ctx, events); err != nil {
			return err
		}
	}
	return nil
}

// ListRuns reads a page of a workflow's runs, newest first.
type ListRuns struct {
	WorkflowID string
	Page       ports.Page
}

// ListRunsHandler lists runs.
type ListRunsHandler struct {
	workflows ports.WorkflowRepository
	runs      ports.RunRepository
}

// NewListRunsHandler makes the query.
func NewListRunsHandler(workflows ports.WorkflowRepository, runs ports.RunRepository) ListRunsHandler {
	return ListRunsHandler{workflows: workflows, runs: runs}
}

// Handle returns up to Page.Limit runs and whether more exist; domain.ErrNotFound when the
// workflow is not in the workspace (a deleted workflow's runs are no longer listed).
func (h ListRunsHandler) Handle(ctx context.Context, q ListRuns) ([]*workflow.Run, bool, error) {
	p, _, err := auth.Load(ctx, access.Read, h.workflows, q.WorkflowID)
	if err != nil {
		return nil, false, err
	}
	return ports.ReadPage(q.Page, func(page ports.Page) ([]*workflow.Run, error) {
		return h.runs.List(ctx, p.WorkspaceID, q.WorkflowID, page)
	})
}

// RetryRun replays a failed run: the action that failed gets a new cycle of attempts, due at
// once, and the actions it skipped follow it; actions that succeeded are not run again.
type RetryRun struct {
	WorkflowID string
	ID         string
}

// RetryRunHandler replays runs.
type RetryRunHandler struct {
	workflows ports.WorkflowRepository
	runs      ports.RunRepository
	clock     ports.Clock
}

// NewRetryRunHandler makes the command.
func NewRetryRunHandler(workflows ports.WorkflowRepository, runs ports.RunRepository, clock ports.Clock) RetryRunHandler {
	return RetryRunHandler{workflows: workflows, runs: runs, clock: clock}
}

// Handle queues the run again and returns it. domain.ErrNotFound when the workflow is not in
// the workspace (a deleted workflow's runs are not retried) or the run is not one of its runs;
// workflow.ErrRunNotFailed (a conflict) when the run succeeded or is still queued or running.
// The run engine claims it like any due run.
func (h RetryRunHandler) Handle(ctx context.Context, cmd RetryRun) (*workflow.Run, error) {
	p, _, err := auth.Load(ctx, access.Write, h.workflows, cmd.WorkflowID)
	if err != nil {
		return nil, err
	}
	return h.runs.Update(ctx, p.WorkspaceID, cmd.ID, func(r *workflow.Run) (ports.Effects, error) {
		if r.Kind() != workflow.KindWorkflow || r.WorkflowID() != cmd.WorkflowID {
			return ports.Effects{}, domain.ErrNotFound
		}
		return ports.Effects{}, r.Retry(h.clock.Now())
	})
}
