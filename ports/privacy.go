package ports

import (
	"context"

	"github.com/formward/formward/domain/audit"
	"github.com/formward/formward/domain/submission"
)

// BlindIndex turns a respondent's email address into a keyed hash under a key of its
// workspace, so submissions can be found by address without the address being stored in the
// clear or comparable across workspaces.
type BlindIndex interface {
	// Email returns the HMAC-SHA256 of the normalised address (submission.NormalizeEmail).
	Email(workspaceID, email string) []byte
	// Version names the key the hashes are made with; an index built under another version is
	// rebuilt.
	Version() string
}

// PrivacyIndex finds submissions by the blind index of their email answers, and rebuilds that
// index for submissions stored before it existed (or under another key).
type PrivacyIndex interface {
	// FindByEmail returns every submission of the workspace, in any form, with an email answer
	// whose blind index is hash, oldest first.
	FindByEmail(ctx context.Context, workspaceID string, hash []byte) ([]*submission.Submission, error)
	// Export is FindByEmail that also writes the audit events record makes from the number of
	// submissions found, in the transaction that reads them: no export goes unrecorded.
	Export(ctx context.Context, workspaceID string, hash []byte, record func(found int) ([]audit.Event, error)) ([]*submission.Submission, error)
	// Reindex rebuilds the index of up to limit submissions not yet indexed under the current
	// key, resuming where the last call stopped; done reports that none is left.
	Reindex(ctx context.Context, limit int) (indexed int, done bool, err error)
}
