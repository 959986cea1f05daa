package objectstore

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"strings"
	"unicode"

	"github.com/formward/formward/ports"
)

// ErrInvalidKey means a key or prefix is not a safe relative path of [A-Za-z0-9/_.-].
var ErrInvalidKey = errors.New("invalid object key")

const maxKeyLen = 1024

// ValidateKey accepts relative slash-separated keys of [A-Za-z0-9/_.-] without empty, "." or ".." segments.
func ValidateKey(key string) error {
	if key == "" || strings.HasSuffix(key, "/") {
		return fmt.Errorf("%w: %q", ErrInvalidKey, key)
	}
	return validatePrefix(key)
}

// validatePrefix is ValidateKey that also accepts a trailing slash; an empty prefix is refused
// so no caller deletes or measures the whole store by accident.
func validatePrefix(p string) error {
	if p == "" || len(p) > maxKeyLen || strings.HasPrefix(p, "/") {
		return fmt.Errorf("%w: %q", ErrInvalidKey, p)
	}
	for _, r := range p {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '/' || r == '_' || r == '.' || r == '-') {
			return fmt.Errorf("%w: %q", ErrInvalidKey, p)
		}
	}
	segs := strings.Split(strings.TrimSuffix(p, "/"), "/")
	for _, s := range segs {
		if s == "" || s == "." || s == ".." {
			return fmt.Errorf("%w: %q", ErrInvalidKey, p)
		}
	}
	return nil
}

// FormPrefix is where every file of a form lives; deleting the form deletes this prefix.
func FormPrefix(workspaceID, formID string) string {
	return ports.FormFilesPrefix(workspaceID, formID)
}

// NewKey returns an unguessable key for an upload to a form:
// workspaces/<ws>/forms/<form>/<128 random bits in hex>/<sanitised filename>.
func NewKey(workspaceID, formID, filename string) (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("random key: %w", err)
	}
	key := FormPrefix(workspaceID, formID) + hex.EncodeToString(b[:]) + "/" + SanitizeFilename(filename)
	if err := ValidateKey(key); err != nil {
		return "", err
	}
	return key, nil
}

// SanitizeFilename keeps the base name's letters, digits, '.', '-' and '_' (others become '_'),
// at most 100 bytes, never empty, hidden, or ending in the local store's sidecar suffix.
func SanitizeFilename(name string) string {
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
	if strings.HasSuffix(s, metaSuffix) {
		s += "_"
	}
	if s == "" || s == "." || s == ".." {
		s = "file"
	}
	return s
}
