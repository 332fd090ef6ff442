package zaplens

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/zaplens/zaplens/internal/otlpwire"
)

// WithRedactKeys's promise covers every way a redacted value may leave:
// the provider's encoder redacts by key on both ways and in what other
// code emits; the bridge redacts what it sends around the encoder (span
// events) and what it makes into text before any key can be seen (the
// JSON of values past the depth bound). The keys zap derives from a
// field's key carry that field's text, and are redacted with it.

// redactedKeys are keys with the keys zap derives from them: an error
// field's "<key>Verbose" (its %+v) and "<key>Causes" (a multi-error's),
// and "<key>Error", the text of a marshaler or Stringer that failed.
// zap.Error's text goes as exception.message: redacting "error" redacts
// it, and redacting exception.message redacts zap.Error's details.
func redactedKeys(keys []string) []string {
	var out []string
	for _, k := range keys {
		if k == "" {
			continue
		}
		out = append(out, k, k+"Verbose", k+"Causes", k+"Error")
		switch {
		case strings.EqualFold(k, errorKey):
			out = append(out, keyExceptionMessage)
		case strings.EqualFold(k, keyExceptionMessage):
			out = append(out, errorKey+"Verbose", errorKey+"Causes")
		}
	}
	return out
}

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
