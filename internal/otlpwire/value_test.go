package otlpwire

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// ValidString is strings.ToValidUTF8 with U+FFFD, and isASCII is true of
// ASCII alone, wherever the first other byte falls in the eight-byte
// words.
func TestValidStringAndIsASCII(t *testing.T) {
	var inputs []string
	for n := range 20 {
		base := strings.Repeat("a", n)
		inputs = append(inputs, base)
		for at := 0; at <= n; at++ {
			for _, odd := range []string{"é", "\xff", "\xe2\x82", "日本", "\x80"} {
				inputs = append(inputs, base[:at]+odd+base[at:])
			}
		}
	}
	for _, s := range inputs {
		want := strings.ToValidUTF8(s, "\uFFFD")
		if got := ValidString(s); got != want {
			t.Errorf("ValidString(%q) = %q, want %q", s, got, want)
		}
		ascii := !strings.ContainsFunc(s, func(r rune) bool { return r >= utf8.RuneSelf })
		if got := isASCII(s); got != ascii {
			t.Errorf("isASCII(%q) = %v, want %v", s, got, ascii)
		}
	}
}
