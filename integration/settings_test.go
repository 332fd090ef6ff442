package integration

import (
	"cmp"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// envSettings reads a long mode's ZAPLENS_* settings, each the default when
// unset, and collects every bad value, for the mode to fail with all of
// them at once.
type envSettings struct{ errs []string }

func (e *envSettings) bad(name, format string, args ...any) {
	e.errs = append(e.errs, name+": "+fmt.Sprintf(format, args...))
}

// count is a whole number of at least least.
func (e *envSettings) count(name string, def, least int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < least {
		e.bad(name, "%q is not a whole number of at least %d", v, least)
	}
	return n
}

// duration is a time.ParseDuration of at least least.
func (e *envSettings) duration(name string, def, least time.Duration) time.Duration {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	switch {
	case err != nil:
		e.bad(name, "%v", err)
	case d < least:
		e.bad(name, "%v is shorter than %v", d, least)
	}
	return d
}

// list is a comma-separated list of the names in allowed.
func (e *envSettings) list(name, def string, allowed ...string) []string {
	var out []string
	for k := range strings.SplitSeq(cmp.Or(os.Getenv(name), def), ",") {
		if !slices.Contains(allowed, k) {
			e.bad(name, "%q is none of %s", k, strings.Join(allowed, ", "))
		}
		out = append(out, k)
	}
	return out
}

// err is every bad value, or nil.
func (e *envSettings) err() error {
	if len(e.errs) == 0 {
		return nil
	}
	return fmt.Errorf("%s", strings.Join(e.errs, "; "))
}
