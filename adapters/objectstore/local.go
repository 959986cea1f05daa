// Package objectstore keeps uploaded files outside the database: on the local disk under the
// data dir, or in any S3-compatible store. It also holds the framework-free helpers around
// files: unguessable keys, signed expiring URLs, the download handler, per-field rules and the
// per-form quota.
package objectstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/ports"
)

// metaSuffix names the sidecar holding an object's content type. Keys may not end with it, so
// an object and a sidecar never collide.
const metaSuffix = ".meta"

// Local stores objects as files under Root (the data dir's files/ folder): directories 0700,
// files 0600, each written to a temporary file and renamed into place.
type Local struct {
	root string
}

var _ ports.ObjectStore = (*Local)(nil)

// NewLocal opens (creating it when missing) the directory that holds the objects.
func NewLocal(root string) (*Local, error) {
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, fmt.Errorf("create files dir: %w", err)
	}
	return &Local{root: root}, nil
}

// LocalDir is where the local store keeps its files inside the data dir.
func LocalDir(dataDir string) string { return filepath.Join(dataDir, "files") }

type localMeta struct {
	ContentType string `json:"content_type"`
	Size        int64  `json:"size"`
}

func (l *Local) path(key string) (string, error) {
	if err := ValidateKey(key); err != nil {
		return "", err
	}
	if strings.HasSuffix(key, metaSuffix) {
		return "", fmt.Errorf("%w: a key may not end with %q", ErrInvalidKey, metaSuffix)
	}
	return filepath.Join(l.root, filepath.FromSlash(key)), nil
}

// Put writes the object and its sidecar, each atomically.
func (l *Local) Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) error {
	p, err := l.path(key)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("create object dir: %w", err)
	}
	var n int64
	if at, ok := r.(io.ReaderAt); ok && size >= parallelCopyMin {
		n, err = writeAtomic(p, func(f *os.File) (int64, error) { return copyAt(f, at, size) })
	} else {
		n, err = writeAtomic(p, func(f *os.File) (int64, error) { return io.Copy(f, io.LimitReader(r, size+1)) })
	}
	if err != nil {
		return err
	}
	if n != size {
		_ = os.Remove(p)
		return fmt.Errorf("put %s: read %d bytes, expected %d", key, n, size)
	}
	meta, _ := json.Marshal(localMeta{ContentType: contentType, Size: size})
	if _, err := writeAtomic(p+metaSuffix, func(f *os.File) (int64, error) { return io.Copy(f, strings.NewReader(string(meta))) }); err != nil {
		_ = os.Remove(p)
		return err
	}
	return nil
}

// parallelCopyMin is the size from which Put copies an object that reads at offsets (an
// upload's spool file, an encrypted object sealed as it is read) on every core.
const parallelCopyMin = 4 << 20

// copyPiece is how much one goroutine of copyAt reads and writes at a time.
const copyPiece = 1 << 20

// copyAt copies exactly size bytes of r into f, piece by piece on GOMAXPROCS goroutines, each
// piece written at its offset: reading (or sealing) one piece runs beside writing another. It
// returns size+1 when r holds more than size bytes.
func copyAt(f *os.File, r io.ReaderAt, size int64) (int64, error) {
	var one [1]byte
	if k, _ := r.ReadAt(one[:], size); k > 0 {
		return size + 1, nil
	}
	var next atomic.Int64
	errs := make([]error, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i := range errs {
		wg.Go(func() {
			buf := make([]byte, copyPiece)
			for {
				at := next.Add(copyPiece) - copyPiece
				if at >= size {
					return
				}
				b := buf[:min(copyPiece, size-at)]
				if k, err := r.ReadAt(b, at); k < len(b) {
					if err == nil || errors.Is(err, io.EOF) {
						err = io.ErrUnexpectedEOF
					}
					errs[i] = err
					next.Store(size) // the others stop too
					return
				}
				if _, err := f.WriteAt(b, at); err != nil {
					errs[i] = err
					next.Store(size)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return 0, err
	}
	return size, nil
}

// writeAtomic fills a temporary file next to p and renames it over p; fill returns how many
// bytes it wrote.
func writeAtomic(p string, fill func(*os.File) (int64, error)) (int64, error) {
	tmp, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
	if err != nil {
		return 0, fmt.Errorf("create temp file: %w", err)
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	n, err := fill(tmp)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return n, fmt.Errorf("write object: %w", err)
	}
	if err := os.Chmod(tmp.Name(), 0o600); err != nil {
		return n, fmt.Errorf("chmod object: %w", err)
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		return n, fmt.Errorf("rename object: %w", err)
	}
	return n, nil
}

// Get opens the object, or returns domain.ErrNotFound.
func (l *Local) Get(ctx context.Context, key string) (io.ReadCloser, ports.ObjectInfo, error) {
	p, err := l.path(key)
	if err != nil {
		return nil, ports.ObjectInfo{}, err
	}
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ports.ObjectInfo{}, fmt.Errorf("object %s: %w", key, domain.ErrNotFound)
	}
	if err != nil {
		return nil, ports.ObjectInfo{}, fmt.Errorf("open object: %w", err)
	}
	st, err := f.Stat()
	if err != nil || st.IsDir() {
		_ = f.Close()
		if err == nil {
			return nil, ports.ObjectInfo{}, fmt.Errorf("object %s: %w", key, domain.ErrNotFound)
		}
		return nil, ports.ObjectInfo{}, fmt.Errorf("stat object: %w", err)
	}
	info := ports.ObjectInfo{Size: st.Size(), ModTime: st.ModTime().UTC(), ContentType: "application/octet-stream"}
	if raw, err := os.ReadFile(p + metaSuffix); err == nil {
		var m localMeta
		if json.Unmarshal(raw, &m) == nil && m.ContentType != "" {
			info.ContentType = m.ContentType
		}
	}
	return f, info, nil
}

// Delete removes the object and its sidecar; a missing object is not an error.
func (l *Local) Delete(ctx context.Context, key string) error {
	p, err := l.path(key)
	if err != nil {
		return err
	}
	for _, f := range []string{p, p + metaSuffix} {
		if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("delete object: %w", err)
		}
	}
	l.pruneEmpty(filepath.Dir(p))
	return nil
}

// pruneEmpty removes the now-empty directories between dir and the root.
func (l *Local) pruneEmpty(dir string) {
	for dir != l.root && strings.HasPrefix(dir, l.root+string(filepath.Separator)) {
		if os.Remove(dir) != nil {
			return
		}
		dir = filepath.Dir(dir)
	}
}

// DeletePrefix removes every object whose key starts with prefix.
func (l *Local) DeletePrefix(ctx context.Context, prefix string) error {
	if err := ValidatePrefix(prefix); err != nil {
		return err
	}
	if strings.HasSuffix(prefix, "/") {
		dir := filepath.Join(l.root, filepath.FromSlash(strings.TrimSuffix(prefix, "/")))
		if err := os.RemoveAll(dir); err != nil {
			return fmt.Errorf("delete prefix: %w", err)
		}
		l.pruneEmpty(filepath.Dir(dir))
		return nil
	}
	return l.walk(ctx, prefix, func(key, p string, _ fs.FileInfo) error { return l.Delete(ctx, key) })
}

// Usage sums the sizes of the objects under prefix.
func (l *Local) Usage(ctx context.Context, prefix string) (int64, error) {
	if err := ValidatePrefix(prefix); err != nil {
		return 0, err
	}
	var total int64
	err := l.walk(ctx, prefix, func(_, _ string, st fs.FileInfo) error {
		total += st.Size()
		return nil
	})
	return total, err
}

// walk calls fn for every object (not sidecar, not temporary file) whose key starts with prefix.
func (l *Local) walk(ctx context.Context, prefix string, fn func(key, path string, st fs.FileInfo) error) error {
	// Only the directory holding the prefix's last segment can contain matches.
	start := l.root
	if i := strings.LastIndex(prefix, "/"); i >= 0 {
		start = filepath.Join(l.root, filepath.FromSlash(prefix[:i]))
	}
	err := walkFiles(ctx, start, func(p string, d fs.DirEntry) error {
		if strings.HasSuffix(p, metaSuffix) || strings.HasPrefix(d.Name(), ".tmp-") {
			return nil
		}
		rel, err := filepath.Rel(l.root, p)
		if err != nil {
			return err
		}
		key := filepath.ToSlash(rel)
		if !strings.HasPrefix(key, prefix) {
			return nil
		}
		st, err := d.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		return fn(key, p, st)
	})
	if err != nil {
		return fmt.Errorf("walk objects: %w", err)
	}
	return nil
}

// walkFiles calls fn for every file under start, until ctx ends; what vanishes meanwhile, start
// included, is skipped.
func walkFiles(ctx context.Context, start string, fn func(p string, d fs.DirEntry) error) error {
	return filepath.WalkDir(start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		return fn(p, d)
	})
}

// List calls fn with the key of every object under prefix, sidecars and temporary files aside.
func (l *Local) List(ctx context.Context, prefix string, fn func(key string) error) error {
	if err := ValidatePrefix(prefix); err != nil {
		return err
	}
	return l.walk(ctx, prefix, func(key, _ string, _ fs.FileInfo) error { return fn(key) })
}

// RemoveStaleTemp deletes the temporary files under prefix last written before cutoff: what a
// process that died in the middle of a write left behind (live writes rename theirs within
// seconds). It returns how many it removed.
func (l *Local) RemoveStaleTemp(ctx context.Context, prefix string, cutoff time.Time) (int, error) {
	if err := ValidatePrefix(prefix); err != nil {
		return 0, err
	}
	start := filepath.Join(l.root, filepath.FromSlash(strings.TrimSuffix(prefix, "/")))
	removed := 0
	err := walkFiles(ctx, start, func(p string, d fs.DirEntry) error {
		if !strings.HasPrefix(d.Name(), ".tmp-") {
			return nil
		}
		st, err := d.Info()
		if err != nil || !st.ModTime().Before(cutoff) {
			return nil
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		removed++
		return nil
	})
	if err != nil {
		return removed, fmt.Errorf("remove stale temporary files: %w", err)
	}
	return removed, nil
}
