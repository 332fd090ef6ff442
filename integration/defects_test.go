package integration

import (
	"fmt"
	"os"
	"sort"
	"sync"
	"testing"
)

// Known defects of the library (FINDINGS.md) are checked where they show,
// but by default they do not fail the run: other engineers fix the root
// while this module follows it. Each one seen is logged by its test and
// listed on stderr at the end of the run. With ZAPLENS_STRICT=1 they fail
// their tests like any other assertion.

const strictEnv = "ZAPLENS_STRICT"

var (
	defectsMu   sync.Mutex
	defectsSeen = map[string][]string{} // finding -> tests that showed it
)

// knownDefect reports a failure caused by a known library defect: an error
// under ZAPLENS_STRICT=1, else a log line and an entry in the end-of-run
// list.
//
//lint:ignore U1000 every finding of FINDINGS.md is fixed today; this is how the next one is reported while it is open
func knownDefect(t testing.TB, finding, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv(strictEnv) == "1" {
		t.Errorf("KNOWN DEFECT (FINDINGS.md %s): %s", finding, msg)
		return
	}
	t.Logf("KNOWN DEFECT (FINDINGS.md %s), not failing the test (set %s=1 to fail): %s", finding, strictEnv, msg)
	defectsMu.Lock()
	defectsSeen[finding] = append(defectsSeen[finding], t.Name())
	defectsMu.Unlock()
}

// reportKnownDefects lists the known defects the run saw.
func reportKnownDefects() {
	defectsMu.Lock()
	defer defectsMu.Unlock()
	if len(defectsSeen) == 0 {
		return
	}
	keys := make([]string, 0, len(defectsSeen))
	for k := range defectsSeen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Fprintf(os.Stderr, "integration: known library defects seen in this run (see FINDINGS.md; %s=1 makes them fail):\n", strictEnv)
	for _, k := range keys {
		fmt.Fprintf(os.Stderr, "  %s: %v\n", k, defectsSeen[k])
	}
}
