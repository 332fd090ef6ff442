package transport

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

const (
	// MaxSanitized is the most bytes Sanitize returns, marker included.
	MaxSanitized = 512
	// Redacted replaces each secret in Sanitize's result.
	Redacted = "[redacted]"
	// CutMarker ends a result of Sanitize that was cut to MaxSanitized.
	CutMarker = "...(cut)"
)

// Sanitize makes a text that came from outside, such as a collector's status
// message or response body, fit for an error or a log line: every non-empty
// secret in it becomes "[redacted]", control characters, invalid UTF-8 and
// other non-printable runes are escaped as strconv.Quote would (so the result
// holds no raw newline or ESC), a backslash is doubled, and the result is
// cut to MaxSanitized bytes, ending with "...(cut)" when it was cut.
func Sanitize(s string, secrets []string) string {
	for _, sec := range secrets {
		if sec != "" && strings.Contains(s, sec) {
			s = strings.ReplaceAll(s, sec, Redacted)
		}
	}
	var b strings.Builder
	fit := -1 // length of b at the last rune boundary that leaves room for the marker
	for i := 0; i < len(s); {
		if b.Len() <= MaxSanitized-len(CutMarker) {
			fit = b.Len()
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\x`)
			b.WriteByte("0123456789abcdef"[s[i]>>4])
			b.WriteByte("0123456789abcdef"[s[i]&0xf])
		case r == '\\':
			b.WriteString(`\\`)
		case strconv.IsPrint(r):
			b.WriteString(s[i : i+size])
		default:
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		}
		i += size
		if b.Len() > MaxSanitized {
			return b.String()[:fit] + CutMarker
		}
	}
	return b.String()
}

// sortLongestFirst orders secrets so that a longer one, which may hold a
// shorter one, is redacted first.
func sortLongestFirst(s []string) {
	slices.SortFunc(s, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
}
