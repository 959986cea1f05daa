package objectstore

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/formward/formward/domain/submission"
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
	return ValidatePrefix(key)
}

// ValidatePrefix is ValidateKey that also accepts a trailing slash; an empty prefix is refused
// so no caller deletes or measures the whole store by accident.
func ValidatePrefix(p string) error {
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

// NewKey returns an unguessable key in the shape uploads had before they were kept under their
// submission's prefix (tests of those older uploads use it):
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

// SanitizeFilename keeps a file name safe for a key (submission.FileName).
func SanitizeFilename(name string) string { return submission.FileName(name) }
