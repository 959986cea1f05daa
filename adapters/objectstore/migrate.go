package objectstore

import (
	"context"
	"errors"
	"fmt"
	"path"
	"time"

	"github.com/formward/formward/domain"
)

// Lister is a store that can list its keys: what EncryptPlaintext walks. Local and S3 are.
type Lister interface {
	List(ctx context.Context, prefix string, fn func(key string) error) error
}

// Migration counts what EncryptPlaintext did.
type Migration struct {
	// Encrypted is how many plaintext files were encrypted (and their plaintext deleted).
	Encrypted int `json:"files_encrypted"`
	// Removed is how many plaintext files were deleted because their encrypted copy already
	// existed (a pass interrupted between the two steps) or their file was deleted meanwhile.
	Removed int `json:"plaintext_removed"`
	// TempRemoved is how many temporary files of interrupted writes were deleted (local disk).
	TempRemoved int `json:"temporary_files_removed"`
}

// staleTemp is how old a temporary file of the local store must be to count as abandoned.
const staleTemp = time.Hour

// EncryptPlaintext encrypts every file stored before encryption existed, so that no plaintext
// stays behind after an upgrade. For each plaintext file it writes the encrypted object (a new
// stored key), which readers use from then on, and only then deletes the plaintext; a file
// deleted meanwhile loses its encrypted copy too. It is idempotent and resumable (a pass that
// stopped halfway is finished by the next), and safe while the server takes uploads and
// deletions: new uploads are already encrypted and never touched.
func (e *Encrypted) EncryptPlaintext(ctx context.Context, now time.Time) (Migration, error) {
	var m Migration
	lister, ok := e.next.(Lister)
	if !ok {
		// A store that cannot list came after encryption (an extension's): it holds no
		// plaintext of an older version.
		return m, nil
	}
	if l, ok := e.next.(*Local); ok {
		n, err := l.RemoveStaleTemp(ctx, filesRoot, now.Add(-staleTemp))
		m.TempRemoved = n
		if err != nil {
			return m, err
		}
	}
	var keys []string
	err := lister.List(ctx, filesRoot, func(key string) error {
		if path.Base(key) != EncryptedSegment {
			keys = append(keys, key)
		}
		return nil
	})
	if err != nil {
		return m, err
	}
	for _, key := range keys {
		if err := ctx.Err(); err != nil {
			return m, err
		}
		encrypted, err := e.encryptOne(ctx, key)
		if err != nil {
			return m, fmt.Errorf("encrypt %s: %w", key, err)
		}
		if encrypted {
			m.Encrypted++
		} else {
			m.Removed++
		}
	}
	return m, nil
}

// encryptOne encrypts the plaintext file at key (unless its encrypted copy exists already),
// then deletes the plaintext; encrypted says whether it wrote the encrypted copy.
func (e *Encrypted) encryptOne(ctx context.Context, key string) (encrypted bool, err error) {
	stored, ws, ok, err := storedKey(key)
	if err != nil {
		// Nothing the application writes: deleting it is the operator's call, not a migration's.
		return false, err
	}
	if !ok {
		return false, fmt.Errorf("%w: %q is outside %s", ErrInvalidKey, key, filesRoot)
	}
	if rc, _, err := e.next.Get(ctx, stored); err == nil {
		_ = rc.Close()
		return false, e.next.Delete(ctx, key)
	} else if !errors.Is(err, domain.ErrNotFound) {
		return false, err
	}
	rc, info, err := e.next.Get(ctx, key)
	if errors.Is(err, domain.ErrNotFound) {
		return false, nil // deleted since the listing
	}
	if err != nil {
		return false, err
	}
	err = e.put(ctx, stored, ws, path.Base(key), rc, info.Size, info.ContentType)
	_ = rc.Close()
	if err != nil {
		return false, err
	}
	// The plaintext may have been deleted (with its submission) while it was encrypted: then
	// the encrypted copy must go too, or it would outlive the deletion.
	if rc, _, err := e.next.Get(ctx, key); errors.Is(err, domain.ErrNotFound) {
		return false, e.next.Delete(ctx, stored)
	} else if err != nil {
		return false, err
	} else {
		_ = rc.Close()
	}
	return true, e.next.Delete(ctx, key)
}
