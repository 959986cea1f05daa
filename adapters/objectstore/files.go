package objectstore

import (
	"bufio"
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
	"github.com/formward/formward/ports"
)

// FilesPath is the URL path under which signed downloads are served.
const FilesPath = "/files/"

// SniffLen is how many leading bytes a content sniffer reads (http.DetectContentType reads at most 512).
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

// SubmissionLink signs value, a stored answer of the submission (workspaceID, formID,
// submissionID), when it names a file uploaded with that same submission: an object key under
// the submission's own prefix, or (uploads stored before that prefix existed) a Reference to
// an upload of the same form. Anything else, whatever it looks like, is not signed: a value
// can never hand out another submission's or another workspace's file.
func (s Signer) SubmissionLink(workspaceID, formID, submissionID, value string, expires time.Time) (string, bool) {
	if ValidateKey(value) == nil && strings.HasPrefix(value, ports.SubmissionFilesPrefix(workspaceID, formID, submissionID)) {
		return s.URL(value, expires), true
	}
	ref := strings.TrimSuffix(s.BaseURL, "/") + FilesPath
	if s.BaseURL == "" || !strings.HasPrefix(value, ref) {
		return "", false
	}
	key := value[len(ref):]
	rest, ok := strings.CutPrefix(key, ports.FormFilesPrefix(workspaceID, formID))
	if !ok || ValidateKey(key) != nil {
		return "", false
	}
	dir, name, ok := strings.Cut(rest, "/")
	if !ok || len(dir) != 32 || strings.Trim(dir, "0123456789abcdef") != "" || name == "" || strings.Contains(name, "/") {
		return "", false
	}
	return s.URL(key, expires), true
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
// never-sniffed attachment named by its original file name, with byte ranges; a bad or expired signature is 403, a missing object 404. now is
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
		name := info.Name
		if name == "" {
			name = path.Base(key)
		}
		h.Set("Content-Type", ct)
		h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": name}))
		h.Set("Cache-Control", "private, max-age="+strconv.FormatInt(maxAge, 10))
		if rs, ok := body.(io.ReadSeeker); ok {
			// Ranges, HEAD and Content-Length of the (decrypted) content; an encrypted file
			// seeks by decrypting from the package that holds the range's first byte.
			http.ServeContent(w, r, "", info.ModTime, rs)
			return
		}
		h.Set("Content-Length", strconv.FormatInt(info.Size, 10))
		w.WriteHeader(http.StatusOK)
		if r.Method == http.MethodHead {
			return
		}
		_, _ = io.Copy(w, body)
	})
}
