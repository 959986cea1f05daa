package httpkit

import (
	"strings"

	"github.com/formward/formward/application/capture"
	"github.com/formward/formward/domain/submission"
)

// MemberFilesPath is where the dashboard answers a file link that never expires:
// MemberFilesPath + "<submission id>/<file>" sends a signed-in member of the submission's
// workspace on to a freshly signed download link.
const MemberFilesPath = "/app/files/"

// FileLinks says which links an export gives the uploaded files.
type FileLinks string

const (
	// MemberFileLinks are links that never expire, for signed-in members (MemberFilesPath).
	MemberFileLinks FileLinks = "member"
	// SignedFileLinks are signed links that anyone holding them can open for an hour.
	SignedFileLinks FileLinks = "signed"
)

// ExportFileLinks reads an export's file_links query value: "member" or "signed"; when absent,
// member links in CSV and XLSX (files people keep) and signed links in NDJSON (read by
// scripts). ok is false for any other value.
func ExportFileLinks(format, value string, present bool) (links FileLinks, ok bool) {
	switch {
	case !present && format == "ndjson":
		return SignedFileLinks, true
	case !present:
		return MemberFileLinks, true
	case value == string(MemberFileLinks) || value == string(SignedFileLinks):
		return FileLinks(value), true
	}
	return "", false
}

// ExportFileLinksError is the message for a file_links value ExportFileLinks refuses.
const ExportFileLinksError = "file_links must be member (links for signed-in members that never expire) or signed (links that expire after an hour)"

// Linker is the FileLinker that gives the links: signed itself, or member links under
// publicURL for every value signed would sign (anything else is kept as stored).
func (l FileLinks) Linker(publicURL string, signed FileLinker) FileLinker {
	if signed == nil {
		signed = KeepValue
	}
	if l != MemberFileLinks {
		return signed
	}
	return MemberLinks(publicURL, signed)
}

// MemberLinks turns a submission's own uploads into links that never expire,
// publicURL/app/files/<submission id>/<file>, for a signed-in member to open; a value signed
// would not sign (an external link, a text, another submission's file) is kept as stored.
func MemberLinks(publicURL string, signed FileLinker) FileLinker {
	base := strings.TrimSuffix(publicURL, "/") + MemberFilesPath
	return func(s *submission.Submission, value string) string {
		if signed(s, value) == value {
			return value
		}
		rest, ok := capture.FileLinkPath(s, value)
		if !ok {
			return value
		}
		return base + s.ID() + "/" + rest
	}
}
