package transport

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestSanitize(t *testing.T) {
	secrets := []string{"Bearer abc123", "abc123", "k3y"}
	tests := []struct {
		in, want string
	}{
		{"", ""},
		{"plain text: héllo 世界", "plain text: héllo 世界"},
		{"token Bearer abc123 and abc123 and k3y", "token [redacted] and [redacted] and [redacted]"},
		{"line1\nline2\r\n", `line1\nline2\r\n`},
		{"\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`},
		{"tab\tnul\x00bell\a", `tab\tnul\x00bell\a`},
		{"bad \xff\xfe utf8", `bad \xff\xfe utf8`},
		{"bidi \u202egnp.exe", `bidi \u202egnp.exe`},
		{"line\u2028sep", `line\u2028sep`},
		{`back\slash "quoted"`, `back\\slash "quoted"`},
		{"del\x7f c1\u0085", `del\x7f c1\u0085`},
	}
	for _, tt := range tests {
		if got := Sanitize(tt.in, secrets); got != tt.want {
			t.Errorf("Sanitize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSanitizeIgnoresEmptySecrets(t *testing.T) {
	if got := Sanitize("abc", []string{"", "zz"}); got != "abc" {
		t.Errorf("got %q", got)
	}
}

func TestSanitizeCaps(t *testing.T) {
	mib := strings.Repeat("a", 1<<20)
	got := Sanitize(mib, nil)
	if len(got) > MaxSanitized || !strings.HasSuffix(got, CutMarker) || !strings.HasPrefix(got, "aaaa") {
		t.Errorf("1 MiB: %d bytes, ends %q", len(got), got[max(len(got)-20, 0):])
	}
	// Escapes grow the text: the cap holds for the escaped form, and the cut
	// never splits an escape.
	got = Sanitize(strings.Repeat("\x1b", 1<<20), nil)
	if len(got) > MaxSanitized || !strings.HasSuffix(got, `\x1b`+CutMarker) {
		t.Errorf("1 MiB of ESC: %d bytes, ends %q", len(got), got[max(len(got)-20, 0):])
	}
	// Multibyte runes are not split either.
	got = Sanitize(strings.Repeat("世", 1000), nil)
	if len(got) > MaxSanitized || !utf8.ValidString(got) {
		t.Errorf("runes: %d bytes, valid %v", len(got), utf8.ValidString(got))
	}
	exact := strings.Repeat("b", MaxSanitized)
	if got := Sanitize(exact, nil); got != exact {
		t.Errorf("a text of exactly %d bytes was changed", MaxSanitized)
	}
	if got := Sanitize(exact+"c", nil); len(got) != MaxSanitized || !strings.HasSuffix(got, CutMarker) {
		t.Errorf("%d bytes: got %d bytes", MaxSanitized+1, len(got))
	}
	// A secret past the cut is redacted all the same, and a secret at the
	// cut leaves no part of itself.
	secret := "Bearer " + strings.Repeat("s", 40)
	got = Sanitize(strings.Repeat("x", MaxSanitized-20)+secret+strings.Repeat("y", 1<<20)+secret, []string{secret})
	if strings.Contains(got, "sss") {
		t.Errorf("part of a secret survived: %q", got[len(got)-40:])
	}
}

func FuzzSanitize(f *testing.F) {
	f.Add("hello\nworld 1234", "hiss")
	f.Add(strings.Repeat("\x00\xff世", 400), "")
	f.Add("\u202e\x1b]0;x\x07 zz", "z")
	f.Fuzz(func(t *testing.T, s, secret string) {
		// The secret's letters are none that an escape, "[redacted]" or the
		// cut marker writes, so only a failure to redact can show it.
		const alphabet = "ghijklmopqswyz"
		b := []byte(secret)
		for i := range b {
			b[i] = alphabet[int(b[i])%len(alphabet)]
		}
		if secret = string(b); secret == "" {
			secret = "gh"
		}
		got := Sanitize(s, []string{secret})
		if len(got) > MaxSanitized {
			t.Fatalf("%d bytes", len(got))
		}
		if strings.Contains(got, secret) {
			t.Fatalf("secret %q in %q", secret, got)
		}
		if !utf8.ValidString(got) {
			t.Fatalf("invalid UTF-8: %q", got)
		}
		for _, r := range got {
			if !unicode.IsPrint(r) && r != ' ' {
				t.Fatalf("non-printable %U in %q", r, got)
			}
		}
	})
}
