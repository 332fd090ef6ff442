package toolbin

import (
	"strings"
	"testing"
)

func TestTailKeepsTheLastBytes(t *testing.T) {
	tl := &Tail{Max: 8}
	for _, s := range []string{"abc", "defgh", "ijk"} {
		if n, err := tl.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	if got := tl.String(); got != "defghijk" {
		t.Fatalf("kept %q, want the last 8 bytes %q", got, "defghijk")
	}
	tl.Write([]byte(strings.Repeat("z", 20)))
	if got := tl.String(); got != strings.Repeat("z", 8) {
		t.Fatalf("kept %q after a write longer than Max", got)
	}
}
