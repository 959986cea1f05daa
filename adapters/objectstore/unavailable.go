package objectstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"

	"github.com/minio/minio-go/v7"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/ports"
)

// Unavailable wraps a store so its storage failures (disk full, read-only filesystem, I/O
// error, S3 unreachable or overloaded) come back as domain.ErrUnavailable: the caller answers
// "try again shortly", not a bare failure. The original error stays reachable.
func Unavailable(store ports.ObjectStore) ports.ObjectStore { return unavailableStore{store} }

type unavailableStore struct{ next ports.ObjectStore }

func (u unavailableStore) Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) error {
	return unavailable(u.next.Put(ctx, key, r, size, contentType))
}

func (u unavailableStore) Get(ctx context.Context, key string) (io.ReadCloser, ports.ObjectInfo, error) {
	rc, info, err := u.next.Get(ctx, key)
	return rc, info, unavailable(err)
}

func (u unavailableStore) Delete(ctx context.Context, key string) error {
	return unavailable(u.next.Delete(ctx, key))
}

func (u unavailableStore) DeletePrefix(ctx context.Context, prefix string) error {
	return unavailable(u.next.DeletePrefix(ctx, prefix))
}

func (u unavailableStore) Usage(ctx context.Context, prefix string) (int64, error) {
	n, err := u.next.Usage(ctx, prefix)
	return n, unavailable(err)
}

// unavailable marks err as domain.ErrUnavailable when it says the storage is failing.
func unavailable(err error) error {
	if err == nil || errors.Is(err, domain.ErrUnavailable) || !storageDown(err) {
		return err
	}
	return fmt.Errorf("%w: %w", domain.ErrUnavailable, err)
}

func storageDown(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false // the caller gave up; that says nothing about the storage
	}
	for _, errno := range []syscall.Errno{syscall.ENOSPC, syscall.EDQUOT, syscall.EROFS, syscall.EIO, syscall.ECONNREFUSED, syscall.ECONNRESET} {
		if errors.Is(err, errno) {
			return true
		}
	}
	var netErr net.Error
	if errors.As(err, &netErr) {
		return true
	}
	var resp minio.ErrorResponse
	if errors.As(err, &resp) {
		switch resp.Code {
		case "SlowDown", "ServiceUnavailable", "InternalError", "XMinioStorageFull", "XMinioServerNotInitialized":
			return true
		}
		return resp.StatusCode == 503
	}
	return false
}
