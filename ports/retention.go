package ports

import (
	"context"
	"time"

	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/submission"
)

// Expiry says which submissions of a form the retention job deletes: those received before
// Before (when not zero), and those older than the Keep most recent (when Keep is above 0).
type Expiry struct {
	Before time.Time
	Keep   int
}

// SubmissionRef names one stored submission.
type SubmissionRef struct {
	WorkspaceID string
	FormID      string
	ID          string
	// SubmittedAt is when it was received, when the reader knows it.
	SubmittedAt time.Time
}

// DeletionAudit makes the audit events written with a deletion, from the number of rows it
// actually deleted (another request may have deleted some first).
type DeletionAudit func(deleted int64) ([]audit.Event, error)

// SubmissionDeletion is what one DeleteSubmissions call did.
type SubmissionDeletion struct {
	// Deleted is how many submissions it deleted.
	Deleted int64
	// Held is how long its transaction held the database's writer, not counting the wait for
	// it: what the capture path waited for meanwhile, which a paced caller rests after.
	Held time.Duration
}

// WorkspacePurge counts what PurgeWorkspaceData deleted.
type WorkspacePurge struct {
	Forms, Webhooks, Workflows, Deliveries, Runs, Events int64
}

// Any reports whether anything was deleted.
func (p WorkspacePurge) Any() bool {
	return p.Forms+p.Webhooks+p.Workflows+p.Deliveries+p.Runs+p.Events > 0
}

// RetentionStore deletes what a workspace's plan no longer keeps, in short transactions, so
// the capture path never waits long behind it.
type RetentionStore interface {
	// FormIDs returns the IDs of every form of the workspace.
	FormIDs(ctx context.Context, workspaceID string) ([]string, error)
	// Expired returns up to limit of the form's submissions that x expires, oldest first.
	Expired(ctx context.Context, workspaceID, formID string, x Expiry, limit int) ([]*submission.Submission, error)
	// ExpiredRefs is Expired without opening the submissions, for a form with no stored files.
	ExpiredRefs(ctx context.Context, workspaceID, formID string, x Expiry, limit int) ([]SubmissionRef, error)
	// DeleteSubmissions deletes the submissions, each only where its ref says it is (workspace
	// and form), with everything kept about each of them (their
	// email index, workflow runs, one-per-email keys) and adjusts the forms' counts, together
	// with the audit events made by events (may be nil), in one transaction. It returns how
	// many submissions it deleted (missing ones are skipped) and how long it held the writer.
	// A call without events may commit
	// without waiting for the disk (a crash may undo it, with its tombstones, and the caller
	// then finds the same submissions again); a call with events commits durably, and so do
	// all the calls before it. A caller therefore reports its work done only after the call
	// that records it.
	DeleteSubmissions(ctx context.Context, refs []SubmissionRef, events DeletionAudit) (SubmissionDeletion, error)
	// CaptureWrites is a count that moves whenever captures are written, so that a paced job
	// rests only while captures compete for the database; ok is false when the store cannot
	// see every capture (other processes write too), and a paced job then always rests.
	CaptureWrites() (n uint64, ok bool)
	// PurgeExpiredLogs deletes the form's webhook deliveries created before the time (they
	// carry copies of submissions), at most limit at a time, and returns how many went.
	PurgeExpiredLogs(ctx context.Context, workspaceID, formID string, before time.Time, limit int) (int64, error)
	// DeleteDeliveriesOf deletes the form's webhook deliveries about one of the submissions:
	// those whose stored body carries it (sealed, so this reads every delivery of the form)
	// and those of a stored event about it. It returns how many went.
	DeleteDeliveriesOf(ctx context.Context, workspaceID, formID string, submissionIDs []string) (int64, error)
	// PurgeWorkspaceData deletes the rest of a workspace's data once its submissions are gone:
	// forms, webhooks and their deliveries, workflows and their runs, outbox events and stored
	// idempotent responses, in batches of at most limit rows. The workspace, its members,
	// invitations, API keys, integrations and audit log stay. The audit events made by events
	// are written with the last batch.
	PurgeWorkspaceData(ctx context.Context, workspaceID string, limit int, events func(WorkspacePurge) ([]audit.Event, error)) (WorkspacePurge, error)
}
