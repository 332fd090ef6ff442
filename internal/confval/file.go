package confval

import (
	"fmt"
	"io"
	"os"
	"syscall"
)

// MaxFile bounds a certificate or key file, and a configuration file:
// far more than any.
const MaxFile = 1 << 20

// ReadFile reads a certificate, key or configuration file once, and only
// a regular file of at most MaxFile bytes: a FIFO would block the
// program's start, and /dev/zero would read until memory ran out.
func ReadFile(path string) ([]byte, error) {
	// Non-blocking, so that opening a FIFO returns at once, to be refused.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	if st.Size() > MaxFile {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, MaxFile)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxFile+1))
	if err == nil && len(b) > MaxFile {
		err = fmt.Errorf("%s: larger than %d bytes", path, MaxFile)
	}
	return b, err
}
