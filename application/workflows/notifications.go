package workflows

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/access"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/domain/workflow"
	"github.com/formward/formward/ports"
)

// A form's notifications (the owner email and the respondent confirmation) are runs of the run
// engine without a workflow: the run starter queues them on submission.created next to the
// workflow runs, the engine sends them through the send_email runner and retries them on the
// workflow schedule, and the form's notification run log lists them.

// notificationActionType is the action runner that sends notifications.
const notificationActionType = "send_email"

// NotificationFileLinkLifetime is how long the file links of an owner notification stay valid:
// long enough for an owner to read the email some days later.
const NotificationFileLinkLifetime = 7 * 24 * time.Hour

// notificationRuns returns the runs of f's enabled notifications for e (a submission.created
// event of f). The respondent confirmation is queued only when the event carries an answer in
// its email field.
func notificationRuns(ids ports.IDs, f *form.Form, e event.Event, now time.Time) []*workflow.Run {
	n := f.Settings().Notifications
	var out []*workflow.Run
	if o := n.Owner; o.Enabled && len(o.To) > 0 {
		to := make([]any, len(o.To))
		for i, a := range o.To {
			to[i] = a
		}
		out = append(out, workflow.StartNotificationRun(ids.New(PrefixRun), f.WorkspaceID(), workflow.KindOwner,
			workflow.ActionSnapshot{ActionID: string(workflow.KindOwner), Type: notificationActionType, Config: map[string]any{"to": to}}, e, now))
	}
	if r := n.Respondent; r.Enabled && r.EmailFieldID != "" {
		if v, _ := workflow.EventFields(e)[r.EmailFieldID].(string); strings.TrimSpace(v) != "" {
			out = append(out, workflow.StartNotificationRun(ids.New(PrefixRun), f.WorkspaceID(), workflow.KindRespondent,
				workflow.ActionSnapshot{ActionID: string(workflow.KindRespondent), Type: notificationActionType, Config: map[string]any{
					"to": "{{" + r.EmailFieldID + "}}", "subject": r.SubjectTemplate(), "body": r.Body}}, e, now))
		}
	}
	return out
}

// formsOfBatch reads each form of a batch once.
type formsOfBatch struct {
	forms ports.FormRepository
	seen  map[string]*form.Form // nil when the form is gone
}

func (b *formsOfBatch) get(ctx context.Context, workspaceID, formID string) (*form.Form, error) {
	key := workspaceID + "/" + formID
	if f, ok := b.seen[key]; ok {
		return f, nil
	}
	f, err := b.forms.Get(ctx, workspaceID, formID)
	switch {
	case errors.Is(err, domain.ErrNotFound):
		f = nil
	case err != nil:
		return nil, err
	}
	b.seen[key] = f
	return f, nil
}

// notificationInput is what a notification run's email needs beyond a workflow action's input:
// every answer in form order (files as signed links), the reply-to address and the subject.
func notificationInput(r *workflow.Run, s *runSubject, links ports.FileLinker, now time.Time) (answers []ports.Answer, replyTo, subject string) {
	seen := map[string]bool{}
	for _, fl := range s.formFields {
		seen[fl.ID] = true
		a := ports.Answer{FieldID: fl.ID, Label: fl.Label, Values: valueStrings(s.values[fl.ID]), File: fl.Type == form.TypeFile}
		if a.File && links != nil {
			for i, v := range a.Values {
				if link, ok := links.SubmissionLink(r.WorkspaceID(), r.FormID(), r.SubmissionID(), v, now.Add(NotificationFileLinkLifetime)); ok {
					a.Values[i] = link
				}
			}
		}
		if replyTo == "" && fl.Type == form.TypeEmail && len(a.Values) == 1 {
			if addr, ok := form.ParseEmailAddress(a.Values[0]); ok {
				replyTo = addr
			}
		}
		answers = append(answers, a)
	}
	// Answers to fields deleted since (or of a deleted form) are listed after, by field ID.
	var rest []string
	for id := range s.values {
		if !seen[id] {
			rest = append(rest, id)
		}
	}
	sort.Strings(rest)
	for _, id := range rest {
		answers = append(answers, ports.Answer{FieldID: id, Label: id, Values: valueStrings(s.values[id])})
	}
	if override, subj := formBackendOverrides(s.metadata); override != "" || subj != "" {
		if addr, ok := form.ParseEmailAddress(override); ok {
			replyTo = addr
		}
		subject = subj
	}
	return answers, replyTo, subject
}

// formBackendOverrides reads the form-backend mode's `_replyto` and `_subject`, kept in the
// submission's sealed metadata: they replace the owner notification's reply-to (the first email
// answer) and subject.
func formBackendOverrides(m submission.Metadata) (replyTo, subject string) {
	if m.ReplyTo != nil {
		replyTo = *m.ReplyTo
	}
	if m.Subject != nil {
		subject = *m.Subject
	}
	return replyTo, subject
}

func valueStrings(v submission.Value) []string {
	if v.IsList() {
		return append([]string(nil), v.Strings()...)
	}
	if s := v.String(); s != "" {
		return []string{s}
	}
	return nil
}

// ListNotificationRuns reads a page of a form's notification runs, newest first.
type ListNotificationRuns struct {
	FormID string
	Page   ports.Page
}

// ListNotificationRunsHandler lists notification runs.
type ListNotificationRunsHandler struct {
	forms ports.FormRepository
	runs  ports.RunRepository
}

// NewListNotificationRunsHandler makes the query.
func NewListNotificationRunsHandler(forms ports.FormRepository, runs ports.RunRepository) ListNotificationRunsHandler {
	return ListNotificationRunsHandler{forms: forms, runs: runs}
}

// Handle returns up to Page.Limit runs and whether more exist; domain.ErrNotFound when the form
// is not in the workspace.
func (h ListNotificationRunsHandler) Handle(ctx context.Context, q ListNotificationRuns) ([]*workflow.Run, bool, error) {
	p, _, err := auth.Load(ctx, access.Read, h.forms, q.FormID)
	if err != nil {
		return nil, false, err
	}
	rs, more, err := ports.ReadPage(q.Page, func(page ports.Page) ([]*workflow.Run, error) {
		return h.runs.ListNotifications(ctx, p.WorkspaceID, q.FormID, page)
	})
	if err != nil {
		return nil, false, fmt.Errorf("list notification runs of %s: %w", q.FormID, err)
	}
	return rs, more, nil
}
