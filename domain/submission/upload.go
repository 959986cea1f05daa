package submission

import (
	"mime"
	"path"
	"strconv"
	"strings"
	"unicode"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/form"
)

// DefaultMaxFileBytes bounds one uploaded file of a field that sets no limit of its own.
const DefaultMaxFileBytes = 25 << 20

// Default caps on the files of one public post, so that an anonymous respondent cannot fill
// the disk with one request.
const (
	DefaultMaxFilesPerField = 10
	DefaultMaxFilesPerPost  = 20
)

// FileLimits bound the number of files one public post may carry.
type FileLimits struct {
	PerField int
	PerPost  int
}

// Check reports every field over PerField, and the post when it is over PerPost. counts are
// the files per field ID.
func (l FileLimits) Check(fields []form.Field, counts map[string]int) domain.Violations {
	if l.PerField <= 0 {
		l.PerField = DefaultMaxFilesPerField
	}
	if l.PerPost <= 0 {
		l.PerPost = DefaultMaxFilesPerPost
	}
	var vs domain.Violations
	total := 0
	for _, f := range fields {
		n := counts[f.ID]
		total += n
		if n > l.PerField {
			vs.Add(f.ID, "too_many_files", f.Label+": at most "+strconv.Itoa(l.PerField)+" files can be uploaded here ("+strconv.Itoa(n)+" were sent)")
		}
	}
	if total > l.PerPost {
		vs.Add("files", "too_many_files", "at most "+strconv.Itoa(l.PerPost)+" files can be sent with one response ("+strconv.Itoa(total)+" were sent)")
	}
	return vs
}

// FileInfo is what the server knows of one uploaded file before storing it: its size, the
// type the client declared and the type its first bytes look like.
type FileInfo struct {
	Name     string
	Size     int64
	Declared string
	Sniffed  string
}

// CheckFile applies a file field's rules (size, accepted types) to one upload. Both the
// declared type and the sniffed one must be accepted (a generic sniff result such as
// application/octet-stream is not held against a specific declared type). It returns the
// content type to store, or a violation for the field.
func CheckFile(f form.Field, fi FileInfo) (string, *domain.Violation) {
	max := f.MaxFileBytes
	if max <= 0 {
		max = DefaultMaxFileBytes
	}
	name := f.Label + ": " + fi.Name + ": "
	if fi.Size > max {
		return "", &domain.Violation{Field: f.ID, Code: "file_too_large", Message: name + "the file is larger than " + formatSize(max)}
	}
	sniffed := mediaType(fi.Sniffed)
	decl := mediaType(fi.Declared)
	if decl == "" || decl == "application/octet-stream" {
		decl = sniffed
	}
	if decl == "" {
		decl = "application/octet-stream"
	}
	if len(f.Accept) == 0 {
		return decl, nil
	}
	if !accepts(f.Accept, decl) || !(accepts(f.Accept, sniffed) || genericSniff(sniffed, decl)) {
		return "", &domain.Violation{Field: f.ID, Code: "file_type_not_allowed",
			Message: name + "this type of file is not accepted here (accepted: " + strings.Join(f.Accept, ", ") + ")"}
	}
	return decl, nil
}

func accepts(accept []string, t string) bool {
	for _, a := range accept {
		a = strings.ToLower(strings.TrimSpace(a))
		if a == "*/*" || a == t || strings.HasSuffix(a, "/*") && strings.HasPrefix(t, strings.TrimSuffix(a, "*")) {
			return true
		}
	}
	return false
}

// genericSniff reports whether the sniffer only recognised a family that the declared type
// belongs to (CSV is text/plain to it, DOCX a ZIP archive, many binary formats unknown).
func genericSniff(sniffed, declared string) bool {
	switch sniffed {
	case "application/octet-stream":
		return !strings.HasPrefix(declared, "text/") && !strings.HasPrefix(declared, "image/")
	case "text/plain":
		return strings.HasPrefix(declared, "text/") && declared != "text/html" ||
			declared == "application/json" || declared == "application/xml" || strings.HasSuffix(declared, "+json")
	case "application/zip":
		return strings.HasPrefix(declared, "application/vnd.openxmlformats") || strings.HasPrefix(declared, "application/vnd.oasis") ||
			declared == "application/epub+zip" || declared == "application/x-zip-compressed"
	}
	return false
}

func mediaType(ct string) string {
	t, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return ""
	}
	return strings.ToLower(t)
}

func formatSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + " MB"
	case n >= 1024 && n%1024 == 0:
		return strconv.FormatInt(n/1024, 10) + " KB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// FileName keeps an uploaded file's base name safe for an object key: letters, digits, '.',
// '-' and '_' (others become '_'), at most 100 bytes, never empty or hidden, and never ending
// in ".meta" (the local store keeps each object's content type in a ".meta" file beside it).
func FileName(name string) string {
	name = path.Base(strings.ReplaceAll(name, "\\", "/"))
	var b strings.Builder
	for _, r := range name {
		switch {
		case r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)), r == '.', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	s := strings.TrimLeft(b.String(), ".")
	if len(s) > 100 {
		ext := path.Ext(s)
		if len(ext) > 20 {
			ext = ""
		}
		s = s[:100-len(ext)] + ext
	}
	if strings.HasSuffix(s, ".meta") {
		s += "_"
	}
	if s == "" || s == "." || s == ".." {
		s = "file"
	}
	return s
}
