package workspace

import (
	"context"
	"errors"
	"strings"

	"github.com/formward/formward/application/auth"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/access"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/ports"
)

// A respondent's privacy request names them by email address. Submissions are found through
// the blind index of their email answers (a keyed hash under a key of the workspace), across
// every form of the workspace; the address itself is never stored or logged.

// PrivacyExport asks for every submission whose email answer is Email.
type PrivacyExport struct {
	Email string
}

// PrivacyExportResult holds the respondent's submissions, oldest first.
type PrivacyExportResult struct {
	Submissions []*submission.Submission
}

// PrivacyErase deletes every submission whose email answer is Email, with its files.
type PrivacyErase struct {
	Email string
}

// PrivacyEraseResult counts the deleted submissions and drafts.
type PrivacyEraseResult struct {
	SubmissionsDeleted int64
	DraftsDeleted      int64
}

func privacyEmail(raw string) (string, error) {
	e := submission.NormalizeEmail(raw)
	at := strings.LastIndex(e, "@")
	if e == "" || at <= 0 || at == len(e)-1 || len(e) > 254 {
		return "", domain.Validation("email", "invalid_email", "email must be an email address")
	}
	return e, nil
}

// PrivacyExportHandler answers an export request (account management).
type PrivacyExportHandler struct {
	index ports.PrivacyIndex
	blind ports.BlindIndex
	ids   ports.IDs
	clock ports.Clock
}

// NewPrivacyExportHandler makes the query.
func NewPrivacyExportHandler(index ports.PrivacyIndex, blind ports.BlindIndex, ids ports.IDs, clock ports.Clock) PrivacyExportHandler {
	return PrivacyExportHandler{index: index, blind: blind, ids: ids, clock: clock}
}

// Handle returns the respondent's submissions, recording privacy.exported (the count, never
// the address) in the transaction that reads them.
func (h PrivacyExportHandler) Handle(ctx context.Context, q PrivacyExport) (PrivacyExportResult, error) {
	p, err := auth.Require(ctx, access.ManageAccount)
	if err != nil {
		return PrivacyExportResult{}, err
	}
	email, err := privacyEmail(q.Email)
	if err != nil {
		return PrivacyExportResult{}, err
	}
	subs, err := h.index.Export(ctx, p.WorkspaceID, h.blind.Email(p.WorkspaceID, email), func(found int) ([]audit.Event, error) {
		e, err := audit.New(h.ids.New(ports.PrefixAudit), p.WorkspaceID, audit.PrivacyExported, p.Actor, nil, p.IPHash,
			map[string]any{"submissions": found}, h.clock.Now())
		return []audit.Event{e}, err
	})
	if err != nil {
		return PrivacyExportResult{}, err
	}
	if subs == nil {
		subs = []*submission.Submission{}
	}
	return PrivacyExportResult{Submissions: subs}, nil
}

// PrivacyEraseHandler answers an erase request (account management).
type PrivacyEraseHandler struct {
	index ports.PrivacyIndex
	blind ports.BlindIndex
	forms ports.FormRepository
	store ports.RetentionStore
	files ports.ObjectStore
	ids   ports.IDs
	clock ports.Clock
	// drafts are respondents' saved progress; nil leaves them.
	drafts ports.DraftRepository
}

// WithDrafts returns the handler erasing the drafts that hold the address too.
func (h PrivacyEraseHandler) WithDrafts(drafts ports.DraftRepository) PrivacyEraseHandler {
	h.drafts = drafts
	return h
}

// NewPrivacyEraseHandler makes the command; files may be nil when no object store is configured.
func NewPrivacyEraseHandler(index ports.PrivacyIndex, blind ports.BlindIndex, forms ports.FormRepository, store ports.RetentionStore,
	files ports.ObjectStore, ids ports.IDs, clock ports.Clock) PrivacyEraseHandler {
	return PrivacyEraseHandler{index: index, blind: blind, forms: forms, store: store, files: files, ids: ids, clock: clock}
}

// Handle deletes the files and the webhook delivery records, then the submissions, in batches;
// the last batch carries the privacy.erased audit event with the counts. A repeated request finds nothing and deletes
// nothing, and still records itself.
func (h PrivacyEraseHandler) Handle(ctx context.Context, cmd PrivacyErase) (PrivacyEraseResult, error) {
	p, err := auth.Require(ctx, access.ManageAccount)
	if err != nil {
		return PrivacyEraseResult{}, err
	}
	email, err := privacyEmail(cmd.Email)
	if err != nil {
		return PrivacyEraseResult{}, err
	}
	hash := h.blind.Email(p.WorkspaceID, email)
	var drafts int64
	if h.drafts != nil {
		// Drafts that hold the address (an email answer, or the address their resume link was
		// sent to) go first, whole.
		if drafts, err = h.drafts.DeleteByEmail(ctx, p.WorkspaceID, hash); err != nil {
			return PrivacyEraseResult{}, err
		}
	}
	subs, err := h.index.FindByEmail(ctx, p.WorkspaceID, hash)
	if err != nil {
		return PrivacyEraseResult{DraftsDeleted: drafts}, err
	}
	forms := map[string]*form.Form{}
	refs := make([]ports.SubmissionRef, 0, len(subs))
	var files int64
	for _, s := range subs {
		f, ok := forms[s.FormID()]
		if !ok {
			f, err = h.forms.Get(ctx, p.WorkspaceID, s.FormID())
			if errors.Is(err, domain.ErrNotFound) {
				continue // the form went meanwhile, with its submissions and files
			}
			if err != nil {
				return PrivacyEraseResult{}, err
			}
			forms[s.FormID()] = f
		}
		n, err := deleteFilesOf(ctx, h.files, f, s)
		if err != nil {
			return PrivacyEraseResult{}, err
		}
		files += int64(n)
		refs = append(refs, ports.SubmissionRef{WorkspaceID: s.WorkspaceID(), FormID: s.FormID(), ID: s.ID()})
	}
	// Webhook delivery records carry copies of the submissions: they go first, so a failure
	// leaves the submissions findable for another attempt.
	byForm := map[string][]string{}
	for _, r := range refs {
		byForm[r.FormID] = append(byForm[r.FormID], r.ID)
	}
	var deliveries int64
	for formID, ids := range byForm {
		n, err := h.store.DeleteDeliveriesOf(ctx, p.WorkspaceID, formID, ids)
		if err != nil {
			return PrivacyEraseResult{}, err
		}
		deliveries += n
	}
	var deleted int64
	for {
		n := min(len(refs), DefaultRetentionBatch)
		batch, last := refs[:n], n == len(refs)
		var record ports.DeletionAudit
		if last {
			record = func(d int64) ([]audit.Event, error) {
				e, err := audit.New(h.ids.New(ports.PrefixAudit), p.WorkspaceID, audit.PrivacyErased, p.Actor, nil, p.IPHash,
					map[string]any{"submissions_deleted": deleted + d, "files_deleted": files, "deliveries_deleted": deliveries, "drafts_deleted": drafts}, h.clock.Now())
				return []audit.Event{e}, err
			}
		}
		r, err := h.store.DeleteSubmissions(ctx, batch, record)
		if err != nil {
			return PrivacyEraseResult{SubmissionsDeleted: deleted, DraftsDeleted: drafts}, err
		}
		deleted += r.Deleted
		refs = refs[n:]
		if last {
			return PrivacyEraseResult{SubmissionsDeleted: deleted, DraftsDeleted: drafts}, nil
		}
	}
}

// ReindexPrivacy builds the blind index of submissions stored before it existed, or under
// another master key; it resumes where an interrupted run stopped.
type ReindexPrivacy struct{}

// ReindexPrivacyHandler runs the backfill to the end.
type ReindexPrivacyHandler struct {
	index ports.PrivacyIndex
}

// NewReindexPrivacyHandler makes the command.
func NewReindexPrivacyHandler(index ports.PrivacyIndex) ReindexPrivacyHandler {
	return ReindexPrivacyHandler{index: index}
}

// Handle indexes batch after batch and returns how many submissions it indexed.
func (h ReindexPrivacyHandler) Handle(ctx context.Context, _ ReindexPrivacy) (int, error) {
	total := 0
	for {
		n, done, err := h.index.Reindex(ctx, DefaultRetentionBatch)
		total += n
		if err != nil || done {
			return total, err
		}
		if err := ctx.Err(); err != nil {
			return total, err
		}
	}
}
