package zaplens

import (
	"fmt"
	"strings"
)

// A logger-name prefix matches a zap name and its children on "."
// boundaries, literally. One that can match no name zap makes is a silent
// misconfiguration: the bridge would send nothing, or keep nothing out. It
// is told once, when the core is built, on the loss output.

// checkPrefixes tells, once each, of the prefixes that can match nothing.
func checkPrefixes(option string, prefixes []string) {
	for _, p := range prefixes {
		if why := unmatchable(p); why != "" {
			tellOnce(fmt.Sprintf("zaplens: %s(%q) can match no zap logger name: %s\n", option, p, why))
		}
	}
}

// unmatchable says why p matches no name zap makes, or "" when it can.
// The empty prefix is the unnamed root logger, and matches it.
func unmatchable(p string) string {
	switch {
	case strings.ContainsAny(p, "*?[]"):
		return "prefixes match literally, with no wildcards; \"a\" already takes a.b and a.b.c"
	case strings.HasSuffix(p, "."):
		return "drop the trailing dot: \"a\" takes a and its children a.b, a.c"
	case strings.HasPrefix(p, ".") || strings.Contains(p, ".."):
		return "zap joins names with single dots, so no name has an empty segment"
	}
	return ""
}
