package otlpwire

import (
	"slices"
	"strings"
	"unicode/utf8"

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
	ascii  map[string]struct{} // the ASCII keys, lowercase
	all    []string            // every key, for the other keys
	lens   uint64              // a bit per length of the ASCII keys, 63 for any longer
	firsts [2]uint64           // a bit per first byte of the ASCII keys, lowercase
	// allASCII: every key is in ascii, so that the filters and the lookup
	// decide alone.
	allASCII bool
}

// NewRedactor returns a Redactor of keys, nil when there are none (empty
// keys are none: an attribute without a key is never sent).
func NewRedactor(keys ...string) *Redactor {
	r := &Redactor{ascii: map[string]struct{}{}, allASCII: true}
	for _, k := range keys {
		if k == "" {
			continue
		}
		r.all = append(r.all, k)
		if isASCII(k) && len(k) <= maxASCIIKey {
			r.ascii[strings.ToLower(k)] = struct{}{}
			r.lens |= lenBit(len(k))
			c := lower(k[0])
			r.firsts[c>>6] |= 1 << (c & 63)
		} else {
			r.allASCII = false
		}
	}
	if len(r.all) == 0 {
		return nil
	}
	return r
}

func lenBit(n int) uint64 { return 1 << min(n, 63) }

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// maxASCIIKey is the longest key looked up without allocating; a longer
// one is compared with each key in turn, which is rare.
const maxASCIIKey = 64

// Match reports whether key's value is to be redacted.
func (r *Redactor) Match(key string) bool {
	if r == nil || key == "" {
		return false
	}
	allASCII := r.allASCII
	if c := key[0]; allASCII && c < utf8.RuneSelf {
		// An ASCII first byte folds to its own case pair alone (the
		// Kelvin sign and the long s fold to ASCII letters, not from
		// them): most keys end here, in two tests.
		if c = lower(c); r.firsts[c>>6]&(1<<(c&63)) == 0 {
			return false
		}
	}
	if len(key) <= maxASCIIKey && isASCII(key) {
		if allASCII && r.lens&lenBit(len(key)) == 0 {
			return false // every key is ASCII, and none has this length
		}
		var buf [maxASCIIKey]byte
		for i := 0; i < len(key); i++ {
			buf[i] = lower(key[i])
		}
		if _, ok := r.ascii[string(buf[:len(key)])]; ok {
			return true
		}
		if allASCII {
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

// Attrs returns kvs with the value of every matching key, at any depth,
// made [Redacted], as the encoder sends them, for a way out that does not
// go through the encoder (a span event). kvs itself is returned when
// nothing matches, else a copy: the caller's slice is left as it was.
func (r *Redactor) Attrs(kvs []attribute.KeyValue) []attribute.KeyValue {
	out, _ := r.attrs(kvs)
	return out
}

// Value returns v with the value of every matching key inside it made
// [Redacted], for a value about to become text (past a depth bound), where
// no key is left for the encoder to see. v itself when r is nil.
func (r *Redactor) Value(v attribute.Value) attribute.Value {
	if r == nil {
		return v
	}
	out, _ := r.value(v)
	return out
}

// attrs is Attrs, and whether anything matched.
func (r *Redactor) attrs(kvs []attribute.KeyValue) ([]attribute.KeyValue, bool) {
	if r == nil {
		return kvs, false
	}
	out, copied := kvs, false
	for i, kv := range kvs {
		v, changed := redactedValue, r.Match(string(kv.Key))
		if !changed {
			v, changed = r.value(kv.Value)
		}
		if !changed {
			continue
		}
		if !copied {
			out, copied = slices.Clone(kvs), true
		}
		out[i].Value = v
	}
	return out, copied
}

// value is v with what matches inside it redacted, and whether anything did.
func (r *Redactor) value(v attribute.Value) (attribute.Value, bool) {
	switch v.Type() {
	case attribute.MAP:
		if kvs, changed := r.attrs(v.AsMap()); changed {
			return attribute.MapValue(kvs...), true
		}
	case attribute.SLICE:
		vs, changed := v.AsSlice(), false
		for i, e := range vs {
			nv, ok := r.value(e)
			if !ok {
				continue
			}
			if !changed {
				vs, changed = slices.Clone(vs), true
			}
			vs[i] = nv
		}
		if changed {
			return attribute.SliceValue(vs...), true
		}
	}
	return v, false
}
