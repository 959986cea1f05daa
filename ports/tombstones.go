package ports

import (
	"context"
	"time"
)

// TombstoneKind says what a tombstone records as deleted.
type TombstoneKind string

const (
	// TombstoneSubmission records one deleted submission (and its files).
	TombstoneSubmission TombstoneKind = "submission"
	// TombstoneForm records a deleted form with everything in it (submissions, files,
	// workflows, webhooks); its submissions also get their own tombstones.
	TombstoneForm TombstoneKind = "form"
	// TombstoneWorkspace records that all of a workspace's data was deleted: its forms,
	// submissions, files, workflows, webhooks, runs and events (the workspace itself, its keys,
	// members and integrations stay).
	TombstoneWorkspace TombstoneKind = "workspace"
)

// Tombstone records that something was deleted: what, in which workspace, and when, never
// any of its content.
type Tombstone struct {
	Kind        TombstoneKind
	ID          string
	WorkspaceID string
	DeletedAt   time.Time
}

// Tombstones is the tombstone log kept beside the backups, outside the database that a restore
// replaces: a restore re-applies the tombstones newer than the backup.
type Tombstones interface {
	// Append adds tombstones durably; once it returns they survive a crash.
	Append(ctx context.Context, ts []Tombstone) error
	// Since returns every tombstone deleted at or after t, oldest first (duplicates possible).
	Since(ctx context.Context, t time.Time) ([]Tombstone, error)
	// Prune forgets tombstones appended before the given time (older than any backup kept).
	Prune(ctx context.Context, before time.Time) error
}

// PendingTombstone is a tombstone the database holds until it has been copied to the log.
type PendingTombstone struct {
	Seq int64
	Tombstone
}

// TombstoneCounts says how many things re-applying tombstones deleted.
type TombstoneCounts struct {
	Submissions int64
	Forms       int64
	Workspaces  int64
}

// TombstoneRepository is the database's own copy of the tombstones: every deletion writes its
// tombstones in the deleting transaction, so none is lost between the commit and the log.
type TombstoneRepository interface {
	// Record stores tombstones in their own transaction (for deletions that happen outside
	// the database, or in tests); deletions in the database write them in their transaction.
	Record(ctx context.Context, ts []Tombstone) error
	// Pending returns the oldest tombstones not yet copied to the log, oldest first: limit of
	// them, or a few more where the last ones were recorded together (they share a Seq), or
	// all there are when fewer.
	Pending(ctx context.Context, limit int) ([]PendingTombstone, error)
	// Shipped removes tombstones the log now holds.
	Shipped(ctx context.Context, seqs []int64) error
	// Apply deletes whatever the tombstones name that the database still holds (after a
	// restore), without writing new tombstones; it is idempotent.
	Apply(ctx context.Context, ts []Tombstone) (TombstoneCounts, error)
}
