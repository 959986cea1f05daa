package objectstore

import (
	"bufio"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/workspace"
	"github.com/formward/formward/ports"
)

// FilesPath is the URL path under which signed downloads are served.
const FilesPath = "/files/"

// MB is the unit of the plan limits and of their messages.
const MB = 1 << 20

// StorageLimit is the file storage one form may hold on a plan (DECISIONS.md); ok is false for
// business, which is unlimited.
func StorageLimit(plan workspace.Plan) (limit int64, ok bool) {
	switch plan {
	case workspace.PlanFree:
		return 100 * MB, true
	case workspace.PlanStarter:
		return 1024 * MB, true
	case workspace.PlanGrowth:
		return 10 * 1024 * MB, true
	}
	return 0, false
}

// ErrQuotaExceeded is matched (errors.Is) by every *QuotaError.
var ErrQuotaExceeded = errors.New("file storage quota exceeded")

// QuotaError says an upload would take a form past its plan's file storage.
type QuotaError struct {
	Plan     workspace.Plan
	Limit    int64
	Used     int64
	Incoming int64
}

func (e *QuotaError) Error() string {
	return fmt.Sprintf("this form has reached its file storage limit of %s on the %s plan; delete files or upgrade the plan",
		formatMB(e.Limit), e.Plan)
}

// Is makes errors.Is(err, ErrQuotaExceeded) true.
func (e *QuotaError) Is(target error) bool { return target == ErrQuotaExceeded }

// Violation turns the error into a field violation for a form page or a 422 answer.
func (e *QuotaError) Violation(fieldID string) domain.Violation {
	return domain.Violation{Field: fieldID, Code: "storage_quota_exceeded", Message: e.Error()}
}

func formatMB(n int64) string {
	if n >= 1024*MB && n%(1024*MB) == 0 {
		return strconv.FormatInt(n/(1024*MB), 10) + " GB"
	}
	return strconv.FormatInt(n/MB, 10) + " MB"
}

// CheckQuota returns a *QuotaError when incoming more bytes would take the objects under
// formPrefix (FormPrefix) past the plan's limit; business is never limited.
func CheckQuota(ctx context.Context, store ports.ObjectStore, formPrefix string, plan workspace.Plan, incoming int64) error {
	limit, ok := StorageLimit(plan)
	if !ok {
		return nil
	}
	used, err := store.Usage(ctx, formPrefix)
	if err != nil {
		return fmt.Errorf("file storage usage: %w", err)
	}
	if used+incoming > limit {
		return &QuotaError{Plan: plan, Limit: limit, Used: used, Incoming: incoming}
	}
	return nil
}

// FileRules are one file field's limits: MaxBytes (0: none) and accepted types such as
// "image/*" or "application/pdf" (none: any type).
type FileRules struct {
	MaxBytes int64
	Accept   []string
}

// FileError is one rejected upload, with a code and a message for the respondent.
type FileError struct {
	Code    string
	Message string
}

func (e *FileError) Error() string { return e.Message }

// Violation turns the error into a field violation.
func (e *FileError) Violation(fieldID string) domain.Violation {
	return domain.Violation{Field: fieldID, Code: e.Code, Message: e.Message}
}

// SniffLen is how many leading bytes Check wants (http.DetectContentType reads at most 512).
const SniffLen = 512

// Peek returns up to SniffLen leading bytes of r and a reader that still yields all of r.
func Peek(r io.Reader) (head []byte, all io.Reader, err error) {
	br := bufio.NewReaderSize(r, SniffLen)
	head, err = br.Peek(SniffLen)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return nil, nil, fmt.Errorf("read upload: %w", err)
	}
	return append([]byte(nil), head...), br, nil
}

// Check applies the rules to an upload of size bytes whose first bytes are head and whose
// client-declared type is declared. Both the declared type and the sniffed one must be
// accepted (a generic sniff result such as application/octet-stream is not held against a
// specific declared type). It returns the content type to store, or a *FileError.
func (r FileRules) Check(size int64, declared string, head []byte) (string, error) {
	if r.MaxBytes > 0 && size > r.MaxBytes {
		return "", &FileError{Code: "file_too_large", Message: "the file is larger than " + formatSize(r.MaxBytes)}
	}
	sniffed := mediaType(http.DetectContentType(head))
	decl := mediaType(declared)
	if decl == "" || decl == "application/octet-stream" {
		decl = sniffed
	}
	if len(r.Accept) == 0 {
		return decl, nil
	}
	if !r.accepts(decl) || !(r.accepts(sniffed) || genericSniff(sniffed, decl)) {
		return "", &FileError{Code: "file_type_not_allowed", Message: "this type of file is not accepted here (accepted: " + strings.Join(r.Accept, ", ") + ")"}
	}
	return decl, nil
}

func (r FileRules) accepts(t string) bool {
	for _, a := range r.Accept {
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
	case n >= MB && n%MB == 0:
		return strconv.FormatInt(n/MB, 10) + " MB"
	case n >= 1024 && n%1024 == 0:
		return strconv.FormatInt(n/1024, 10) + " KB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// Signer makes and checks the expiring download URLs of objects. Key is secret (derived from
// the master key); BaseURL is the public origin of the service, without a trailing slash.
type Signer struct {
	Key     []byte
	BaseURL string
}

// ErrBadSignature means a download URL was not signed by us, was altered, or has expired.
var ErrBadSignature = errors.New("invalid or expired file link")

// Reference is the stable, unsigned URL of an object: what a submission stores. Sign it (or
// the key) when showing it.
func (s Signer) Reference(key string) string {
	return strings.TrimSuffix(s.BaseURL, "/") + FilesPath + key
}

// URL returns BaseURL/files/<key>?expires=<unix>&sig=<hmac>, valid until expires.
func (s Signer) URL(key string, expires time.Time) string {
	exp := strconv.FormatInt(expires.Unix(), 10)
	return s.Reference(key) + "?expires=" + exp + "&sig=" + s.sign(key, exp)
}

// Verify checks the signature (in constant time) and that now is before the expiry.
func (s Signer) Verify(key, expires, sig string, now time.Time) error {
	exp, err := strconv.ParseInt(expires, 10, 64)
	if err != nil || len(s.Key) == 0 {
		return ErrBadSignature
	}
	if !hmac.Equal([]byte(sig), []byte(s.sign(key, expires))) {
		return ErrBadSignature
	}
	if now.Unix() >= exp {
		return ErrBadSignature
	}
	return nil
}

func (s Signer) sign(key, expires string) string {
	m := hmac.New(sha256.New, s.Key)
	m.Write([]byte("formward file v1\n" + key + "\n" + expires))
	return hex.EncodeToString(m.Sum(nil))
}

// KeyFromReference extracts the object key from a stored reference: a Reference or signed
// URL (anything after "/files/", without query), or a bare key.
func KeyFromReference(ref string) (string, bool) {
	if i := strings.Index(ref, FilesPath); i >= 0 {
		ref = ref[i+len(FilesPath):]
	}
	if i := strings.IndexAny(ref, "?#"); i >= 0 {
		ref = ref[:i]
	}
	if ValidateKey(ref) != nil {
		return "", false
	}
	return ref, true
}

// Serve answers GET (and HEAD) /files/<key>?expires=…&sig=… with the object as a private,
// never-sniffed attachment; a bad or expired signature is 403, a missing object 404. now is
// the clock (time.Now when nil).
func Serve(store ports.ObjectStore, signer Signer, now func() time.Time) http.Handler {
	if now == nil {
		now = time.Now
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		i := strings.Index(r.URL.Path, FilesPath)
		if i < 0 {
			http.NotFound(w, r)
			return
		}
		key := r.URL.Path[i+len(FilesPath):]
		q := r.URL.Query()
		t := now()
		if ValidateKey(key) != nil || signer.Verify(key, q.Get("expires"), q.Get("sig"), t) != nil {
			h.Set("Cache-Control", "no-store")
			http.Error(w, ErrBadSignature.Error(), http.StatusForbidden)
			return
		}
		body, info, err := store.Get(r.Context(), key)
		if errors.Is(err, domain.ErrNotFound) {
			h.Set("Cache-Control", "no-store")
			http.NotFound(w, r)
			return
		}
		if err != nil {
			http.Error(w, "file storage unavailable", http.StatusServiceUnavailable)
			return
		}
		defer func() { _ = body.Close() }()
		exp, _ := strconv.ParseInt(q.Get("expires"), 10, 64)
		maxAge := exp - t.Unix()
		if maxAge > 3600 {
			maxAge = 3600
		}
		ct := info.ContentType
		if ct == "" {
			ct = "application/octet-stream"
		}
		h.Set("Content-Type", ct)
		h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": path.Base(key)}))
		h.Set("Cache-Control", "private, max-age="+strconv.FormatInt(maxAge, 10))
		h.Set("Content-Length", strconv.FormatInt(info.Size, 10))
		w.WriteHeader(http.StatusOK)
		if r.Method == http.MethodHead {
			return
		}
		_, _ = io.Copy(w, body)
	})
}
