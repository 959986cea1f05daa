package capture

import (
	"context"
	"errors"
	"time"

	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/access"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/ports"
)

// CaptureSubmission is one response sent through the API (POST /v1/forms/{id}/submissions).
// Public form posts go through SubmitPublicForm. Data names each field by its ID or its key. IP
// is the respondent's address as seen by the edge; only its keyed hash is kept.
type CaptureSubmission struct {
	FormID    string
	Data      map[string]submission.Input
	Source    submission.Source
	IP        string
	UserAgent *string
	Referrer  *string
	UTM       map[string]string
	// Token, when set, is the public form's render token: its nonce is spent in the
	// submission's own transaction, and a nonce already spent gives ports.ErrTokenUsed.
	Token *ports.SpentToken
}

// CaptureSubmissionHandler is the API's capture: validate (a file value is an external HTTPS
// link, never one under the server's own public URL), assign ID and time, store with the
// submission.created event in one (group-committed) transaction.
type CaptureSubmissionHandler struct {
	forms       ports.FormRepository
	submissions ports.SubmissionRepository
	ids         ports.IDs
	clock       ports.Clock
	ipHasher    ports.IPHasher
	activity    ports.FormActivity
	publicURL   string
}

// NewCaptureSubmissionHandler makes the command; publicURL is the server's own public URL,
// under which a file link is refused. activity (may be nil) counts the form's submissions.
func NewCaptureSubmissionHandler(forms ports.FormRepository, submissions ports.SubmissionRepository, ids ports.IDs, clock ports.Clock,
	ipHasher ports.IPHasher, activity ports.FormActivity, publicURL string) CaptureSubmissionHandler {
	return CaptureSubmissionHandler{forms: forms, submissions: submissions, ids: ids, clock: clock, ipHasher: ipHasher, activity: activity,
		publicURL: publicURL}
}

// Handle returns the stored submission once its commit is durable.
func (h CaptureSubmissionHandler) Handle(ctx context.Context, cmd CaptureSubmission) (*submission.Submission, error) {
	_, f, err := auth.Load(ctx, access.Write, h.forms, cmd.FormID)
	if err != nil {
		return nil, err
	}
	meta := submission.Metadata{Source: cmd.Source, UserAgent: cmd.UserAgent, Referrer: cmd.Referrer, UTM: keepUTM(cmd.UTM)}
	if cmd.IP != "" {
		hash := h.ipHasher.Hash(cmd.IP)
		meta.IPHash = &hash
	}
	now := h.clock.Now()
	s, err := submission.New(h.ids.New(ports.PrefixSubmission), f, cmd.Data, meta, now)
	if own := submission.OwnLinks(f.Fields(), cmd.Data, h.publicURL); len(own) > 0 {
		return nil, withViolations(own, err)
	}
	if err != nil {
		return nil, err
	}
	e := event.ForSubmission(h.ids.New(ports.PrefixEvent), event.SubmissionCreated, s, now)
	if cmd.Token != nil {
		err = h.submissions.AddSpendingToken(ctx, s, e, *cmd.Token)
	} else {
		err = h.submissions.Add(ctx, s, e)
	}
	if err != nil {
		return nil, err
	}
	countSubmission(h.activity, f.ID(), now, time.Time{})
	return s, nil
}

// withViolations reports vs with the violations of err (when it has any) in one error, one
// per field: a field in vs is not reported twice.
func withViolations(vs domain.Violations, err error) error {
	var verr *domain.ValidationError
	if errors.As(err, &verr) {
		seen := make(map[string]bool, len(vs))
		for _, v := range vs {
			seen[v.Field] = true
		}
		for _, v := range verr.Violations {
			if !seen[v.Field] {
				vs = append(vs, v)
			}
		}
	}
	return vs.Err()
}

func keepUTM(in map[string]string) map[string]string {
	if len(in) == 0 {
		return nil
	}
	out := make(map[string]string, len(submission.UTMKeys))
	for _, k := range submission.UTMKeys {
		if v, ok := in[k]; ok && v != "" {
			out[k] = v
		}
	}
	return out
}

// UpdateSubmission merges changed values into a submission; Changes name each field by its ID
// or its key.
type UpdateSubmission struct {
	FormID  string
	ID      string
	Changes map[string]submission.Input
}

// UpdateSubmissionHandler updates submissions and emits submission.updated.
type UpdateSubmissionHandler struct {
	forms       ports.FormRepository
	submissions ports.SubmissionRepository
	ids         ports.IDs
	clock       ports.Clock
	publicURL   string
}

// NewUpdateSubmissionHandler makes the command; publicURL is the server's own public URL,
// under which a file link is refused.
func NewUpdateSubmissionHandler(forms ports.FormRepository, submissions ports.SubmissionRepository, ids ports.IDs, clock ports.Clock,
	publicURL string) UpdateSubmissionHandler {
	return UpdateSubmissionHandler{forms: forms, submissions: submissions, ids: ids, clock: clock, publicURL: publicURL}
}

// Handle re-validates the merged answers and stores them with the event.
func (h UpdateSubmissionHandler) Handle(ctx context.Context, cmd UpdateSubmission) (*submission.Submission, error) {
	p, f, err := auth.Load(ctx, access.Write, h.forms, cmd.FormID)
	if err != nil {
		return nil, err
	}
	if own := submission.OwnLinks(f.Fields(), cmd.Changes, h.publicURL); len(own) > 0 {
		return nil, own.Err()
	}
	return h.submissions.Update(ctx, p.WorkspaceID, cmd.FormID, cmd.ID, func(s *submission.Submission) (ports.Effects, error) {
		now := h.clock.Now()
		if err := s.Update(f, cmd.Changes, now); err != nil {
			return ports.Effects{}, err
		}
		return ports.Effects{Events: []event.Event{event.ForSubmission(h.ids.New(ports.PrefixEvent), event.SubmissionUpdated, s, now)}}, nil
	})
}

// DeleteSubmission permanently deletes one submission.
type DeleteSubmission struct {
	FormID string
	ID     string
}

// DeleteSubmissionHandler deletes submissions and records submission.deleted (which names the
// submission and its form, never what the respondent sent).
type DeleteSubmissionHandler struct {
	forms       ports.FormRepository
	submissions ports.SubmissionRepository
	files       ports.ObjectStore
	ids         ports.IDs
	clock       ports.Clock
}

// NewDeleteSubmissionHandler makes the command; files may be nil when no object store is
// configured.
func NewDeleteSubmissionHandler(forms ports.FormRepository, submissions ports.SubmissionRepository, files ports.ObjectStore,
	ids ports.IDs, clock ports.Clock) DeleteSubmissionHandler {
	return DeleteSubmissionHandler{forms: forms, submissions: submissions, files: files, ids: ids, clock: clock}
}

// Handle deletes the submission and its files.
func (h DeleteSubmissionHandler) Handle(ctx context.Context, cmd DeleteSubmission) error {
	p, err := auth.Require(ctx, access.Write)
	if err != nil {
		return err
	}
	if err := deleteSubmissionFiles(ctx, h.forms, h.submissions, h.files, p.WorkspaceID, cmd.FormID, cmd.ID); err != nil {
		return err
	}
	e, err := p.AuditEvent(h.ids, h.clock.Now(), audit.SubmissionDeleted, &audit.Target{Type: "submission", ID: cmd.ID},
		map[string]any{"form_id": cmd.FormID})
	if err != nil {
		return err
	}
	return h.submissions.Delete(ctx, p.WorkspaceID, cmd.FormID, cmd.ID, e)
}

// GetSubmission reads one submission of a form.
type GetSubmission struct {
	FormID string
	ID     string
}

// GetSubmissionHandler reads submissions.
type GetSubmissionHandler struct{ submissions ports.SubmissionRepository }

// NewGetSubmissionHandler makes the query.
func NewGetSubmissionHandler(submissions ports.SubmissionRepository) GetSubmissionHandler {
	return GetSubmissionHandler{submissions: submissions}
}

// Handle returns the submission.
func (h GetSubmissionHandler) Handle(ctx context.Context, q GetSubmission) (*submission.Submission, error) {
	p, err := auth.Require(ctx, access.Read)
	if err != nil {
		return nil, err
	}
	return h.submissions.Get(ctx, p.WorkspaceID, q.FormID, q.ID)
}

// ListSubmissions reads a page of a form's submissions, newest first.
type ListSubmissions struct {
	FormID        string
	Page          ports.Page
	CreatedAfter  *time.Time
	CreatedBefore *time.Time
	// Match, when set, keeps only the submissions whose answer to a field contains a text
	// (see Find: the answers are sealed at rest, so they are compared once opened).
	Match *ValueMatch
	// Source, when set, keeps only the submissions that came this way (the public form page,
	// or the API). It is sealed with the submission's metadata, so Find compares it once
	// opened, like Match.
	Source submission.Source
	// Before, when set, asks for the page of newer submissions just before this position
	// (the "previous" page of a keyset list); Page.After is then ignored.
	Before *ports.Position
}

// ListSubmissionsHandler lists submissions.
type ListSubmissionsHandler struct {
	forms       ports.FormRepository
	submissions ports.SubmissionRepository
	scanner     ports.SubmissionScanner
	scanLimit   int
}

// NewListSubmissionsHandler makes the query; scanner reads towards newer submissions for the
// previous pages.
func NewListSubmissionsHandler(forms ports.FormRepository, submissions ports.SubmissionRepository, scanner ports.SubmissionScanner) ListSubmissionsHandler {
	return ListSubmissionsHandler{forms: forms, submissions: submissions, scanner: scanner, scanLimit: MaxScannedPerPage}
}

// Handle returns up to Page.Limit submissions and whether more exist; an unknown form is not found.
func (h ListSubmissionsHandler) Handle(ctx context.Context, q ListSubmissions) ([]*submission.Submission, bool, error) {
	if q.Match != nil || q.Before != nil {
		p, err := h.Find(ctx, q)
		return p.Submissions, p.More, err
	}
	p, _, err := auth.Load(ctx, access.Read, h.forms, q.FormID)
	if err != nil {
		return nil, false, err
	}
	return ports.ReadPage(q.Page, func(page ports.Page) ([]*submission.Submission, error) {
		return h.submissions.List(ctx, p.WorkspaceID, q.FormID, ports.SubmissionQuery{
			Page: page, CreatedAfter: q.CreatedAfter, CreatedBefore: q.CreatedBefore,
		})
	})
}
