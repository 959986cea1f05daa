package objectstore_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/minio/minio-go/v7"

	"github.com/formward/formward/adapters/objectstore"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/ports"
)

// failing is a store whose every call fails with err.
type failing struct{ err error }

func (f failing) Put(context.Context, string, io.Reader, int64, string) error { return f.err }
func (f failing) Get(context.Context, string) (io.ReadCloser, ports.ObjectInfo, error) {
	return nil, ports.ObjectInfo{}, f.err
}
func (f failing) Delete(context.Context, string) error         { return f.err }
func (f failing) DeletePrefix(context.Context, string) error   { return f.err }
func (f failing) Usage(context.Context, string) (int64, error) { return 0, f.err }

func TestStorageFailuresAreUnavailable(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"disk full", &os.PathError{Op: "write", Path: "x", Err: syscall.ENOSPC}, true},
		{"read-only filesystem", &os.PathError{Op: "open", Path: "x", Err: syscall.EROFS}, true},
		{"S3 unreachable", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, true},
		{"S3 storage full", minio.ErrorResponse{Code: "XMinioStorageFull", StatusCode: 507}, true},
		{"S3 slow down", minio.ErrorResponse{Code: "SlowDown", StatusCode: 503}, true},
		{"missing object", domain.ErrNotFound, false},
		{"access denied", minio.ErrorResponse{Code: "AccessDenied", StatusCode: 403}, false},
		{"caller gave up", context.Canceled, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := objectstore.Unavailable(failing{tc.err})
			err := store.Put(context.Background(), "k", bytes.NewReader(nil), 0, "")
			if got := errors.Is(err, domain.ErrUnavailable); got != tc.want {
				t.Fatalf("Put: %v, unavailable=%v, want %v", err, got, tc.want)
			}
			if !errors.Is(err, tc.err) && !errors.As(err, new(minio.ErrorResponse)) {
				t.Fatalf("original error lost: %v", err)
			}
			if _, err := store.Usage(context.Background(), "p/"); errors.Is(err, domain.ErrUnavailable) != tc.want {
				t.Fatalf("Usage: %v", err)
			}
		})
	}
}

// A full disk under the local store is ErrUnavailable, and writes work again once space is
// freed. Needs root for the small tmpfs.
func TestFullDiskLocalStoreIsUnavailable(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a small tmpfs and fill it")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=4m,mode=0700", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })
	local, err := objectstore.NewLocal(filepath.Join(dir, "files"))
	if err != nil {
		t.Fatal(err)
	}
	store := objectstore.Unavailable(local)
	filler := filepath.Join(dir, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	for block := make([]byte, 64<<10); ; {
		if _, err := f.Write(block); err != nil {
			break
		}
	}
	_ = f.Close()
	body := bytes.Repeat([]byte("x"), 32<<10)
	put := func() error {
		return store.Put(context.Background(), "a/b/file", bytes.NewReader(body), int64(len(body)), "text/plain")
	}
	if err := put(); !errors.Is(err, domain.ErrUnavailable) {
		t.Fatalf("put on a full disk: %v, want ErrUnavailable", err)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if err := put(); err != nil {
		t.Fatalf("put after space was freed: %v", err)
	}
}
