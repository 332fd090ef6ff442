package confval

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// ParsePairs reads the key=value pairs of from (a variable, a file's
// key), separated by commas, keys trimmed and each value read by value,
// as the OTel spec writes headers and resource attributes. Errors give
// the position and key of a bad pair, never its value, which may be a
// token.
func ParsePairs(from, s string, value func(raw string) (string, error)) (map[string]string, error) {
	pairs := map[string]string{}
	if s == "" {
		return pairs, nil
	}
	for i, pair := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(pair, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("%s: pair %d is not key=value (value not shown)", from, i+1)
		}
		val, err := value(v)
		if err != nil {
			return nil, fmt.Errorf("%s: pair %d (%s): bad percent-encoding (value not shown)", from, i+1, Printable(k))
		}
		pairs[k] = val
	}
	return pairs, nil
}

// HeaderValue percent-decodes a header's value, then trims it, as
// otlploggrpc and otlploghttp read one (convHeaders): an encoded newline
// or space at an end, a token file's newline, is not sent.
func HeaderValue(raw string) (string, error) {
	v, err := url.PathUnescape(raw)
	return strings.TrimSpace(v), err
}

// ResourceValue trims a resource attribute's value, then percent-decodes
// it, as sdk/resource reads OTEL_RESOURCE_ATTRIBUTES: an encoded space at
// an end is kept.
func ResourceValue(raw string) (string, error) {
	return url.PathUnescape(strings.TrimSpace(raw))
}

// Printable quotes a key for a message, escaped, so that a key cannot
// forge a line; keys are not secrets.
func Printable(k string) string { return strconv.Quote(k) }
