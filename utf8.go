package zaplens

import (
	"strings"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
)

// OTLP carries strings as protobuf strings, which must be valid UTF-8: one
// invalid byte makes the exporter refuse the whole batch it is in. So, like
// zap's JSON encoder, the bridge replaces invalid bytes with U+FFFD wherever
// it makes a string: keys, string values, the body. Valid strings, nearly
// all of them, cost one scan and no copy. Reflected values need nothing:
// encoding/json already does the same.

func validString(s string) string {
	if isASCII(s) || utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// isASCII answers for the short strings most keys and values are, where a
// plain loop beats utf8.ValidString's setup; longer ones go to it.
func isASCII(s string) bool {
	if len(s) > 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func validKey(k string) attribute.Key { return attribute.Key(validString(k)) }

func stringValue(s string) attribute.Value { return attribute.StringValue(validString(s)) }

func stringAttr(k, v string) attribute.KeyValue {
	return attribute.KeyValue{Key: validKey(k), Value: stringValue(v)}
}
