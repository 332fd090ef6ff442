package toolbin

import (
	"os"
	"strings"
	"testing"
)

func TestGetBuildsOnceThenFinds(t *testing.T) {
	bin := t.TempDir() + "/prog"
	builds := 0
	build := func(out string) error {
		builds++
		return writeFile(out)
	}
	var progress strings.Builder
	for range 2 {
		got, err := Get(bin, &progress, "prog", "seconds", build)
		if err != nil || got != bin {
			t.Fatalf("Get = %q, %v", got, err)
		}
	}
	if builds != 1 {
		t.Fatalf("built %d times, want once", builds)
	}
	if !strings.Contains(progress.String(), "building prog into ") {
		t.Fatalf("progress told %q", progress.String())
	}
}

func writeFile(path string) error { return os.WriteFile(path, []byte("#!/bin/sh\n"), 0o755) }
