//go:build unix

package filelock

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

func lock(f *os.File, wait bool) error {
	how := syscall.LOCK_EX
	if !wait {
		how |= syscall.LOCK_NB
	}
	for {
		err := syscall.Flock(int(f.Fd()), how)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EWOULDBLOCK):
			return ErrLocked
		}
		return fmt.Errorf("filelock: lock %s: %w", f.Name(), err)
	}
}
