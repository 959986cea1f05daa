// Package backup takes, lists, verifies, restores and prunes encrypted database backups, and
// keeps the tombstone log beside them: a local directory (FORMWARD_BACKUP_DIR) or the backups/
// prefix of the S3 bucket.
package backup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/formward/formward/adapters/objectstore"
	"github.com/formward/formward/domain"
)

// Store keeps the backup files: named blobs, written whole.
type Store interface {
	// Put stores the blob durably under name, replacing any; size is the exact length of r.
	Put(ctx context.Context, name string, r io.Reader, size int64) error
	// Get opens the blob, or returns domain.ErrNotFound.
	Get(ctx context.Context, name string) (io.ReadCloser, error)
	// List returns the names that start with prefix, sorted.
	List(ctx context.Context, prefix string) ([]string, error)
	// Delete removes the blob; a missing one is not an error.
	Delete(ctx context.Context, name string) error
	// String says where the store is, for messages.
	String() string
}

// Dir is a Store in a local directory (mode 0700, files 0600); a blob is written to a temporary
// file, fsync'd and renamed into place, so a crash leaves the old blob or the new one.
type Dir struct{ root string }

// NewDir creates the directory when missing.
func NewDir(root string) (*Dir, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("backup dir: %w", err)
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return nil, fmt.Errorf("create backup dir: %w", err)
	}
	return &Dir{root: abs}, nil
}

// Root is the directory's absolute path.
func (d *Dir) Root() string { return d.root }

func (d *Dir) String() string { return d.root }

func (d *Dir) path(name string) (string, error) {
	if err := objectstore.ValidateKey(name); err != nil {
		return "", err
	}
	return filepath.Join(d.root, filepath.FromSlash(name)), nil
}

// Put writes the blob atomically and durably.
func (d *Dir) Put(_ context.Context, name string, r io.Reader, size int64) error {
	p, err := d.path(name)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("backup dir: %w", err)
	}
	f, err := os.CreateTemp(filepath.Dir(p), ".put-*")
	if err != nil {
		return fmt.Errorf("backup put %s: %w", name, err)
	}
	defer func() { _ = os.Remove(f.Name()) }()
	// Synced every 16 MiB, so no single fsync at the end has a whole backup to flush while
	// the captures wait on theirs.
	n, err := io.Copy(&syncingWriter{f: f}, r)
	if err == nil && n != size {
		err = fmt.Errorf("wrote %d bytes, want %d", n, size)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), p)
	}
	if err == nil {
		err = syncDir(filepath.Dir(p))
	}
	if err != nil {
		return fmt.Errorf("backup put %s: %w", name, err)
	}
	return nil
}

// Get opens the blob.
func (d *Dir) Get(_ context.Context, name string) (io.ReadCloser, error) {
	p, err := d.path(name)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("backup file %s: %w", name, domain.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("backup get %s: %w", name, err)
	}
	return f, nil
}

// List walks the directory.
func (d *Dir) List(_ context.Context, prefix string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(d.root, func(p string, e os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			return nil
		}
		rel, err := filepath.Rel(d.root, p)
		if err != nil {
			return err
		}
		if name := filepath.ToSlash(rel); strings.HasPrefix(name, prefix) {
			out = append(out, name)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("backup list: %w", err)
	}
	sort.Strings(out)
	return out, nil
}

// Delete removes the blob.
func (d *Dir) Delete(_ context.Context, name string) error {
	p, err := d.path(name)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("backup delete %s: %w", name, err)
	}
	return nil
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	return f.Sync()
}

// Bucket is a Store under the backups/ prefix of the S3 bucket that also holds the files.
type Bucket struct{ s3 *objectstore.S3 }

// BucketPrefix is where backups and the tombstone log live in the bucket.
const BucketPrefix = "backups/"

// NewBucket uses the configured S3 store.
func NewBucket(s3 *objectstore.S3) *Bucket { return &Bucket{s3: s3} }

func (b *Bucket) String() string { return "s3 " + BucketPrefix }

// Put uploads the blob.
func (b *Bucket) Put(ctx context.Context, name string, r io.Reader, size int64) error {
	return b.s3.Put(ctx, BucketPrefix+name, r, size, "application/octet-stream")
}

// Get downloads the blob.
func (b *Bucket) Get(ctx context.Context, name string) (io.ReadCloser, error) {
	rc, _, err := b.s3.Get(ctx, BucketPrefix+name)
	return rc, err
}

// List lists the blobs under backups/prefix.
func (b *Bucket) List(ctx context.Context, prefix string) ([]string, error) {
	var out []string
	err := b.s3.List(ctx, BucketPrefix+prefix, func(key string) error {
		out = append(out, strings.TrimPrefix(key, BucketPrefix))
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(out)
	return out, nil
}

// Delete removes the blob.
func (b *Bucket) Delete(ctx context.Context, name string) error {
	return b.s3.Delete(ctx, BucketPrefix+name)
}

type syncingWriter struct {
	f       *os.File
	pending int
}

func (w *syncingWriter) Write(b []byte) (int, error) {
	n, err := w.f.Write(b)
	w.pending += n
	if err == nil && w.pending >= 16<<20 {
		w.pending = 0
		err = w.f.Sync()
	}
	return n, err
}
