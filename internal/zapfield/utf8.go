package zapfield

import (
	"go.opentelemetry.io/otel/attribute"

	"github.com/zaplens/zaplens/internal/otlpwire"
)

// OTLP carries strings as protobuf strings, which must be valid UTF-8: one
// invalid byte makes the exporter refuse the whole batch it is in. So, like
// zap's JSON encoder, the conversion replaces invalid bytes with U+FFFD
// wherever it makes a string: keys, string values, the body. Valid
// strings, nearly all of them, cost one scan and no copy. Reflected values
// need nothing: encoding/json already does the same.

func validString(s string) string { return otlpwire.ValidString(s) }

func validKey(k string) attribute.Key { return attribute.Key(validString(k)) }

// StringValue is a string value, made valid UTF-8.
func StringValue(s string) attribute.Value { return attribute.StringValue(validString(s)) }
