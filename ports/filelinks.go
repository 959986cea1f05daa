package ports

import "time"

// FileLinker signs download links of a submission's uploaded files (objectstore.Signer).
type FileLinker interface {
	// SubmissionLink returns an expiring link to value when value names a file uploaded with
	// that submission; ok is false for anything else (an external link is shown as given).
	SubmissionLink(workspaceID, formID, submissionID, value string, expires time.Time) (link string, ok bool)
}
