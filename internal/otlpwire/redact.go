package otlpwire

import (
	"strings"

	"go.opentelemetry.io/otel/attribute"
)

// Redacted is what a redacted attribute's value is sent as, whatever its
// type was.
const Redacted = "[redacted]"

var redactedValue = attribute.StringValue(Redacted)

// A Redactor tells the keys whose values are not sent: a key matches one
// of its keys ignoring case, by Unicode simple folding as strings.EqualFold
// does. The nil Redactor matches nothing, and costs one comparison per key.
type Redactor struct {
	ascii          map[string]struct{} // the ASCII keys, lowercase
	all            []string            // every key, for the other keys
	minLen, maxLen int                 // of the ASCII keys
}

// NewRedactor returns a Redactor of keys, nil when there are none (empty
// keys are none: an attribute without a key is never sent).
func NewRedactor(keys ...string) *Redactor {
	r := &Redactor{ascii: map[string]struct{}{}, minLen: maxASCIIKey + 1}
	for _, k := range keys {
		if k == "" {
			continue
		}
		r.all = append(r.all, k)
		if isASCII(k) && len(k) <= maxASCIIKey {
			r.ascii[strings.ToLower(k)] = struct{}{}
			r.minLen, r.maxLen = min(r.minLen, len(k)), max(r.maxLen, len(k))
		}
	}
	if len(r.all) == 0 {
		return nil
	}
	return r
}

// maxASCIIKey is the longest key looked up without allocating; a longer
// one is compared with each key in turn, which is rare.
const maxASCIIKey = 64

// Match reports whether key's value is to be redacted.
func (r *Redactor) Match(key string) bool {
	if r == nil {
		return false
	}
	if len(key) <= maxASCIIKey && isASCII(key) {
		if len(r.ascii) == len(r.all) && (len(key) < r.minLen || len(key) > r.maxLen) {
			return false // every key is ASCII, and none has this length
		}
		var buf [maxASCIIKey]byte
		for i := 0; i < len(key); i++ {
			c := key[i]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			buf[i] = c
		}
		if _, ok := r.ascii[string(buf[:len(key)])]; ok {
			return true
		}
		if len(r.ascii) == len(r.all) {
			return false
		}
	}
	// Unicode folding may match keys of other lengths (K, the Kelvin sign,
	// folds to k): each key is compared.
	for _, k := range r.all {
		if strings.EqualFold(k, key) {
			return true
		}
	}
	return false
}
