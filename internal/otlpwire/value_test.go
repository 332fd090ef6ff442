package otlpwire

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// ValidString is strings.ToValidUTF8 with U+FFFD, and returns a valid
// string as it is; asciiPrefix ends at the first byte that is not ASCII,
// wherever it falls in the eight-byte words.
func TestValidStringAndASCIIPrefix(t *testing.T) {
	var inputs []string
	for n := range 20 {
		base := strings.Repeat("a", n)
		inputs = append(inputs, base)
		for at := 0; at <= n; at++ {
			for _, odd := range []string{"é", "\xff", "\xe2\x82", "日本"} {
				inputs = append(inputs, base[:at]+odd+base[at:])
			}
		}
	}
	for _, s := range inputs {
		want := strings.ToValidUTF8(s, "\uFFFD")
		if got := ValidString(s); got != want {
			t.Errorf("ValidString(%q) = %q, want %q", s, got, want)
		}
		i := strings.IndexFunc(s, func(r rune) bool { return r >= utf8.RuneSelf })
		if i < 0 {
			i = len(s)
		}
		if got := asciiPrefix(s); got != i {
			t.Errorf("asciiPrefix(%q) = %d, want %d", s, got, i)
		}
	}
}
