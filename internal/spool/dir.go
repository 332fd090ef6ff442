package spool

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// openDir makes the spool's directory if need be, and refuses one that
// another user could put files in, as ssh refuses such files: one not
// owned by the effective user, or writable by its group or others. A file
// planted there would be sent with this process's headers and
// credentials, as its own.
func openDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return checkDir(dir)
}

// checkDir is openDir's check, for a directory that exists.
func checkDir(dir string) error {
	var st syscall.Stat_t
	if err := syscall.Stat(dir, &st); err != nil {
		return &os.PathError{Op: "stat", Path: dir, Err: err}
	}
	if euid := os.Geteuid(); int(st.Uid) != euid {
		return fmt.Errorf("directory %s is owned by uid %d, not by this process's effective uid %d: %w", dir, st.Uid, euid, errUnsafeDir)
	}
	if st.Mode&0o022 != 0 {
		return fmt.Errorf("directory %s is writable by its group or others (mode %#o): %w", dir, st.Mode&0o7777, errUnsafeDir)
	}
	return nil
}

// errUnsafeDir is why a directory another user could write in is refused.
var errUnsafeDir = errors.New("refused, as files another user put there would be sent as this process's; make it the effective user's, mode 0700")

// ownFile tells whether the open file fd is a regular file of the
// effective user: the only files a shipper takes.
func ownFile(fd int) (syscall.Stat_t, bool) {
	var st syscall.Stat_t
	ok := syscall.Fstat(fd, &st) == nil && st.Mode&syscall.S_IFMT == syscall.S_IFREG && int(st.Uid) == os.Geteuid()
	return st, ok
}
