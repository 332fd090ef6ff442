package confval

import (
	"maps"
	"strings"
	"testing"
)

// Headers and resource attributes are read by one parser, whose errors
// name the variable, the pair's position and key, never a value.
// (otlplog's TestBlankPairs: a blank value, where the two differ.)
func TestParsePairs(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want map[string]string
		err  string
	}{
		{"", map[string]string{}, ""},
		{"a=1, b = x%20y ,c=", map[string]string{"a": "1", "b": "x y", "c": ""}, ""},
		{"=s3cret", nil, "V: pair 1 is not key=value"},
		{"a=1,,b=2", nil, "V: pair 2 is not key=value"},
		{"a=1,s3cret", nil, "V: pair 2 is not key=value"},
		{"a=1, k =%zzs3cret", nil, `V: pair 2 ("k"): bad percent-encoding`},
	} {
		got, err := ParsePairs("V", tc.in, ResourceValue)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || strings.Contains(err.Error(), "s3cret") {
				t.Errorf("%q: error %v, want %q without the value", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || !maps.Equal(got, tc.want) {
			t.Errorf("%q: %v, %v, want %v", tc.in, got, err, tc.want)
		}
	}
}
