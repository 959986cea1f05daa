package ports

import (
	"context"
	"time"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/apikey"
	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/event"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/domain/workspace"
)

// Effects are what a change to an aggregate caused, committed in the transaction that stores
// the change: every repository's Update takes a change function that returns them.
type Effects struct {
	// Events are the domain events; they go to the outbox, sealed.
	Events []event.Event
	// Audit are the audit events; they go to the audit log.
	Audit []audit.Event
}

// Position is a keyset position in a newest-first list: (created_at, id).
type Position struct {
	CreatedAt time.Time
	ID        string
}

// Page asks for at most Limit items strictly after the position, newest first.
type Page struct {
	Limit int
	After *Position
}

// ReadPage reads page through list, asking for one item more than page.Limit to learn whether
// more exist: it returns at most page.Limit items and whether more exist.
func ReadPage[T any](page Page, list func(Page) ([]T, error)) ([]T, bool, error) {
	ask := page
	ask.Limit++
	items, err := list(ask)
	if err != nil {
		return nil, false, err
	}
	more := len(items) > page.Limit
	if more {
		items = items[:page.Limit]
	}
	return items, more, nil
}

// WorkspaceRepository stores workspaces.
type WorkspaceRepository interface {
	Create(ctx context.Context, w *workspace.Workspace) error
	Get(ctx context.Context, id string) (*workspace.Workspace, error)
	List(ctx context.Context) ([]*workspace.Workspace, error)
	// Oldest returns the first workspace created, or domain.ErrNotFound when there is none.
	Oldest(ctx context.Context) (*workspace.Workspace, error)
	// Update loads and locks the workspace, lets change modify it, and stores it with the
	// effects change returns (audit events only: a workspace has no outbox), in one transaction.
	Update(ctx context.Context, id string, change func(*workspace.Workspace) (Effects, error)) (*workspace.Workspace, error)
}

// APIKeyRepository stores API keys (only the hash of their secret).
type APIKeyRepository interface {
	// Create stores the key with its audit events in one transaction.
	Create(ctx context.Context, k *apikey.Key, events ...audit.Event) error
	// Get returns the key by ID, revoked or not, or domain.ErrNotFound.
	Get(ctx context.Context, id string) (*apikey.Key, error)
	// List returns the keys of one workspace, or of all when workspaceID is empty.
	List(ctx context.Context, workspaceID string) ([]*apikey.Key, error)
	// Revoke revokes a key of the workspace (any workspace when workspaceID is empty) with its
	// audit events; unknown IDs give domain.ErrNotFound.
	Revoke(ctx context.Context, workspaceID, id string, at time.Time, events ...audit.Event) error
	// MarkUsed records that the key authenticated a request at the time.
	MarkUsed(ctx context.Context, id string, at time.Time) error
}

// FormVersion is one immutable version of a form's fields.
type FormVersion struct {
	Version   int
	Fields    []form.Field
	CreatedAt time.Time
	// CreatedBy is who made the version; nil for versions that predate the record.
	CreatedBy *audit.Actor
}

// FormVersionRepository reads the versions of a form's fields. The form repository writes a
// version in the transaction that creates the form or changes its fields.
type FormVersionRepository interface {
	// ListVersions returns at most limit versions of the workspace's form below the version
	// before (0: from the newest), newest first, or domain.ErrNotFound when the workspace has
	// no such form.
	ListVersions(ctx context.Context, workspaceID, formID string, before, limit int) ([]FormVersion, error)
	// GetVersion returns one version, or domain.ErrNotFound.
	GetVersion(ctx context.Context, workspaceID, formID string, version int) (FormVersion, error)
}

// FormRepository stores forms; every method is bounded to one workspace.
type FormRepository interface {
	// FormVersionRepository reads the versions the repository writes with the form.
	FormVersionRepository
	// Create stores the form with its audit events in one transaction.
	Create(ctx context.Context, f *form.Form, events ...audit.Event) error
	Get(ctx context.Context, workspaceID, id string) (*form.Form, error)
	// FindByRef returns the workspace's form with this ref, or domain.ErrNotFound.
	FindByRef(ctx context.Context, workspaceID, ref string) (*form.Form, error)
	// Find returns the form with this ID in any workspace (the public form URL names no workspace).
	Find(ctx context.Context, id string) (*form.Form, error)
	// List returns up to page.Limit forms, newest first, optionally of one status.
	List(ctx context.Context, workspaceID string, status *form.Status, page Page) ([]*form.Form, error)
	// Update loads and locks the form, lets change modify it, and stores it together with the
	// effects change returns, in one transaction.
	Update(ctx context.Context, workspaceID, id string, change func(*form.Form) (Effects, error)) (*form.Form, error)
	// Delete removes the form with its submissions and everything bound to it, with the audit
	// events, in one transaction.
	Delete(ctx context.Context, workspaceID, id string, events ...audit.Event) error
	// SubmissionCounts returns the number of stored submissions per form ID.
	SubmissionCounts(ctx context.Context, workspaceID string, formIDs []string) (map[string]int64, error)
	// LastSubmissionTimes returns when the newest stored submission of each form ID was
	// received; a form without submissions (or of another workspace) is not in the result. It
	// costs one index lookup per form, however many submissions a form has.
	LastSubmissionTimes(ctx context.Context, workspaceID string, formIDs []string) (map[string]time.Time, error)
}

// SubmissionQuery filters a form's submissions; bounds are exclusive.
type SubmissionQuery struct {
	Page          Page
	CreatedAfter  *time.Time
	CreatedBefore *time.Time
}

// SubmissionRepository stores submissions, sealed at rest.
type SubmissionRepository interface {
	// Add stores a new submission and its event in one transaction. It returns once the commit
	// is durable; concurrent calls may share one transaction (group commit).
	Add(ctx context.Context, s *submission.Submission, e event.Event) error
	// AddSpendingToken is Add that also spends tok's nonce in the same transaction. A nonce
	// already spent gives ErrTokenUsed and stores nothing; of concurrent calls with one nonce,
	// exactly one succeeds.
	AddSpendingToken(ctx context.Context, s *submission.Submission, e event.Event, tok SpentToken) error
	// AddGuarded is Add under the public capture's guards, checked in the same transaction:
	// ErrTokenUsed, domain.ErrFormClosed (the form is full) or ErrEmailUsed store nothing; of
	// concurrent calls, never more than the limit succeed.
	AddGuarded(ctx context.Context, s *submission.Submission, e event.Event, g CaptureGuards) error
	Get(ctx context.Context, workspaceID, formID, id string) (*submission.Submission, error)
	// Find returns the workspace's submission id whatever its form (a file link names only the
	// submission), or domain.ErrNotFound.
	Find(ctx context.Context, workspaceID, id string) (*submission.Submission, error)
	List(ctx context.Context, workspaceID, formID string, q SubmissionQuery) ([]*submission.Submission, error)
	// Update loads and locks the submission, lets change modify it, and stores it with the
	// effects change returns, in one transaction.
	Update(ctx context.Context, workspaceID, formID, id string, change func(*submission.Submission) (Effects, error)) (*submission.Submission, error)
	// Delete removes the submission with the audit events, in one transaction.
	Delete(ctx context.Context, workspaceID, formID, id string, events ...audit.Event) error
}

// StoredResponse is a response kept for an Idempotency-Key.
type StoredResponse struct {
	Status int
	Body   []byte
	// SubmissionID names the submission the request created, if it created one: deleting that
	// submission deletes the stored response with it.
	SubmissionID string
}

// ErrIdempotencyKeyReused is Reserve's answer when the key was used with another request within
// 24 hours, or its first request is still running.
var ErrIdempotencyKeyReused = domain.Conflict("this Idempotency-Key was already used with another request, or that request is still running")

// ErrIdempotentSubmissionDeleted is Reserve's answer to the request that created a submission
// since deleted: its stored response went with the submission (only the key and the request's
// fingerprint are kept).
var ErrIdempotentSubmissionDeleted = domain.Conflict("the submission this key created has been deleted")

// IdempotencyWindow is how long an Idempotency-Key is remembered.
const IdempotencyWindow = 24 * time.Hour

// IdempotencyStore remembers the first response to each Idempotency-Key for 24 hours. Every
// deletion of a submission deletes, in its transaction, the stored response of the request
// that created it.
type IdempotencyStore interface {
	// Reserve claims the key for a request whose body hashes to fingerprint. It returns the
	// stored response when the same request already completed, ErrIdempotentSubmissionDeleted
	// when that request created a submission since deleted, ErrIdempotencyKeyReused when the
	// key was used with another body or is still in progress, and (nil, nil) when the caller
	// owns it now.
	Reserve(ctx context.Context, workspaceID, scope, key string, fingerprint []byte, now time.Time) (*StoredResponse, error)
	// Complete stores the response for a reserved key. When resp names a submission that no
	// longer exists, only that the key created it is stored.
	Complete(ctx context.Context, workspaceID, scope, key string, resp StoredResponse) error
	// Release forgets a reservation whose request failed, so it can be retried.
	Release(ctx context.Context, workspaceID, scope, key string) error
	// Purge removes entries older than before (the retention job's, a window behind).
	Purge(ctx context.Context, before time.Time) error
}

// OutboxRecord is one outbox row as the relay reads it.
type OutboxRecord struct {
	Seq   int64
	Event event.Event
}

// Outbox is read by the relay: committed events in commit order.
type Outbox interface {
	// Pending returns up to limit unpublished events after seq, in order.
	Pending(ctx context.Context, afterSeq int64, limit int) ([]OutboxRecord, error)
	// MarkPublished records that the broker acknowledged these rows.
	MarkPublished(ctx context.Context, seqs []int64, at time.Time) error
	// PurgePublished removes rows published before the given time.
	PurgePublished(ctx context.Context, before time.Time) (int64, error)
}
