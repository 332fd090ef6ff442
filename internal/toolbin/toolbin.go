// Package toolbin keeps the programs the tests and the example build from
// source (VictoriaLogs, the Collector) in the user's cache, built once per
// key, and keeps the end of what such a program prints.
package toolbin

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
)

// Path is where the program called name lives in the cache; name carries
// the key (a version, a hash of what it is built from), so that a change
// builds afresh and two checkouts do not share a binary.
func Path(name string) string {
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	return filepath.Join(cache, "zaplens", name)
}

// Get returns bin when it is there, and otherwise builds it with build,
// telling progress (if not nil) first, since a cold build takes minutes:
// "building <what> into <dir> (<how long>)". build must write bin
// whole or not at all (a temporary name, then a rename), so that a
// concurrent run never starts a half written one.
func Get(bin string, progress io.Writer, what, howLong string, build func(out string) error) (string, error) {
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if progress != nil {
		fmt.Fprintf(progress, "building %s into %s (%s)\n", what, filepath.Dir(bin), howLong)
	}
	if err := build(bin); err != nil {
		return "", err
	}
	return bin, nil
}
