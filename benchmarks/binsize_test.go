package benchmarks

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The pipeline's binary sorts with no instantiation of slices' sort that
// the official pipeline's does not have already: each struct type of our
// own sorted with slices.SortFunc is 13 to 17 KB of code, about 40 KB of
// binary with its pclntab and DWARF (binsize.sh; results/binsize-*.txt).
func TestPipelineAddsNoSortInstantiation(t *testing.T) {
	official := sortInstantiations(t, "otelzap-grpc")
	for name := range sortInstantiations(t, "pipeline") {
		if !official[name] {
			t.Errorf("pipeline instantiates %s", name)
		}
	}
}

// sortInstantiations builds benchmarks/binsize/<program> and returns the
// generic functions of package slices in its binary that sort.
func sortInstantiations(t *testing.T, program string) map[string]bool {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command:", err)
	}
	bin := filepath.Join(t.TempDir(), program)
	if out, err := exec.Command(gobin, "build", "-o", bin, "./binsize/"+program).CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", program, err, out)
	}
	out, err := exec.Command(gobin, "tool", "nm", bin).Output()
	if err != nil {
		t.Fatalf("go tool nm %s: %v", program, err)
	}
	names := map[string]bool{}
	for line := range strings.Lines(string(out)) {
		_, name, ok := strings.Cut(strings.TrimSpace(line), " T ")
		if ok && (strings.HasPrefix(name, "slices.pdqsort") || strings.HasPrefix(name, "slices.stable")) && strings.Contains(name, "[") {
			names[name] = true
		}
	}
	return names
}
