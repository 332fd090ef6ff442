package zapfield

import (
	"bytes"
	"encoding/json"

	"github.com/zaplens/zaplens/internal/otlpwire"
)

// What the conversion makes into text before any key can be seen (the JSON
// of values past the depth bound) is redacted here, by the provider's
// redactor (EntryState.Redact): no key is left for the provider's encoder
// to redact by. The bridge redacts what it sends around the encoder (span
// events); the encoder, both ways, the rest.

// redactTree redacts, in place, the value of every matching key of a
// tree json.Decoder made, at any depth.
func redactTree(r *otlpwire.Redactor, v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if r.Match(k) {
				v[k] = otlpwire.Redacted
			} else {
				redactTree(r, e)
			}
		}
	case []any:
		for _, e := range v {
			redactTree(r, e)
		}
	}
}

// redactJSON is the JSON text b with every matching key's value redacted,
// at any depth; b itself without a redactor. Text that does not read back
// (json.Marshal's never fails to) is redacted whole: nothing unread leaves.
func redactJSON(r *otlpwire.Redactor, b []byte) []byte {
	if r == nil {
		return b
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var tree any
	if dec.Decode(&tree) != nil {
		return []byte(`"` + otlpwire.Redacted + `"`)
	}
	redactTree(r, tree)
	out, _ := json.Marshal(tree) // a decoded tree marshals
	return out
}
