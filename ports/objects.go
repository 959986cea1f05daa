package ports

import (
	"context"
	"io"
	"time"
)

// ObjectStore keeps uploaded files outside the database: the local disk under the data dir by
// default, any S3-compatible store when configured. Keys are unguessable and objects private.
type ObjectStore interface {
	// Put stores the object; size is the exact length of r.
	Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) error
	// Get opens the object, or returns domain.ErrNotFound.
	Get(ctx context.Context, key string) (io.ReadCloser, ObjectInfo, error)
	// Delete removes the object; deleting a missing object is not an error.
	Delete(ctx context.Context, key string) error
	// DeletePrefix removes every object whose key starts with prefix (a submission's or a form's files).
	DeletePrefix(ctx context.Context, prefix string) error
	// Usage returns the total size in bytes of the objects under prefix (a form's storage quota).
	Usage(ctx context.Context, prefix string) (int64, error)
}

// ObjectInfo describes a stored object.
type ObjectInfo struct {
	Size        int64
	ContentType string
	ModTime     time.Time
	// Name is the file's original (sanitised) name when the store keeps it apart from the key.
	Name string
}

// FormFilesPrefix is the key prefix under which every file of a form is stored: deleting the
// form deletes the prefix, and the form's storage quota is the usage under it.
func FormFilesPrefix(workspaceID, formID string) string {
	return WorkspaceFilesPrefix(workspaceID) + "forms/" + formID + "/"
}

// WorkspaceFilesPrefix is the key prefix of every file of a workspace: its storage usage is the
// usage under it.
func WorkspaceFilesPrefix(workspaceID string) string {
	return "workspaces/" + workspaceID + "/"
}

// SubmissionFilesPrefix is the key prefix of the files uploaded with one submission: a file
// link is signed only for an object under the prefix of the submission that holds it, so a
// submission can never hand out another submission's (or workspace's) files.
func SubmissionFilesPrefix(workspaceID, formID, submissionID string) string {
	return FormFilesPrefix(workspaceID, formID) + "submissions/" + submissionID + "/"
}
