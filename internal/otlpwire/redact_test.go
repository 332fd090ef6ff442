package otlpwire

import (
	"bytes"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
)

func TestRedactorMatch(t *testing.T) {
	long := strings.Repeat("k", maxASCIIKey+5)
	r := NewRedactor("Password", "api_key", "", long, "straße")
	for key, want := range map[string]bool{
		"password": true, "PASSWORD": true, "PassWord": true, "passwor": false, "password1": false,
		"API_KEY": true, "api-key": false, "": false, "x": false,
		strings.ToUpper(long): true, long[1:]: false,
		"STRASSE": false, "STRAßE": true, // simple folding, as strings.EqualFold
		"api_\u212aey": true, // the Kelvin sign folds to k
	} {
		if got := r.Match(key); got != want {
			t.Errorf("Match(%q) = %v, want %v", key, got, want)
		}
	}
	if NewRedactor() != nil || NewRedactor("") != nil {
		t.Error("a Redactor of no keys is not nil")
	}
	var none *Redactor
	if none.Match("password") {
		t.Error("the nil Redactor matches")
	}
	// Only ASCII keys: the length filter, then the lookup.
	ascii := NewRedactor("ab", "abcd")
	for key, want := range map[string]bool{"a": false, "AB": true, "abc": false, "ABCD": true, "abcde": false, "\u212a": false} {
		if got := ascii.Match(key); got != want {
			t.Errorf("Match(%q) = %v, want %v", key, got, want)
		}
	}
}

// Match is strings.EqualFold against every key, whatever its filters skip:
// keys of the lengths and first letters kept and not, the letters at the
// ends of the alphabet and the bytes beside them, the letters that fold
// from outside ASCII (the Kelvin sign, the long s), long keys, a key that
// starts with a byte that is not UTF-8.
func TestRedactorMatchIsEqualFold(t *testing.T) {
	if r := NewRedactor("Password", "password", "PASSWORD"); !r.allASCII {
		t.Error("a key given in several cases turned the fast filters off")
	}
	long63, long64 := strings.Repeat("s", 63), strings.Repeat("s", 64)
	sets := [][]string{
		{"secret", "key"}, {"Password", "token"}, {"Password", "password", "PASSWORD"}, {"s", "k"}, {long63}, {long64}, {"kelvin\u212a"}, {"ſ"},
		{"Zulu", "Alpha"}, {"@home", "[x]"},
	}
	var cands []string
	for _, set := range sets {
		for _, k := range set {
			cands = append(cands, k, strings.ToUpper(k), strings.ToLower(k), k+"x", "x"+k, k[:len(k)-1])
		}
	}
	cands = append(cands, "ſecret", "\u212aey", "\u212a", "secreT", "ſ", "S", "", "tokens", "phase", long63+"s", long64[1:], "\x80ecret", "zULU", "aLPHA", "`home", "{x]")
	for _, set := range sets {
		r := NewRedactor(set...)
		for _, c := range cands {
			want := false
			for _, k := range set {
				want = want || strings.EqualFold(k, c)
			}
			if got := r.Match(c); got != want {
				t.Errorf("keys %q: Match(%q) = %v, want %v", set, c, got, want)
			}
		}
	}
}

// The typed writers redact as AppendAttr does, whatever the value's type.
func TestTypedAttrsRedact(t *testing.T) {
	lim := Limits{AttributeCount: -1, ValueLength: -1, Redact: NewRedactor("s")}
	want := AppendAttr(nil, attribute.String("S", Redacted), Limits{AttributeCount: -1, ValueLength: -1})
	for name, got := range map[string][]byte{
		"string":  AppendStringAttr(nil, "S", "v", &lim),
		"bytes":   AppendBytesAttr(nil, "S", []byte("v"), &lim),
		"text":    AppendTextAttr(nil, "S", []byte("v"), &lim),
		"badtext": AppendTextAttr(nil, "S", []byte("v\xff"), &lim),
		"int":     AppendIntAttr(nil, "S", 1, &lim),
		"float":   AppendFloatAttr(nil, "S", 1, &lim),
		"bool":    AppendBoolAttr(nil, "S", true, &lim),
		"map":     AppendMapAttr(nil, "S", []attribute.KeyValue{attribute.Int("a", 1)}, lim),
		"slice":   AppendSliceAttr(nil, "S", []attribute.KeyValue{attribute.Int("a", 1)}, lim),
		"attr":    AppendAttr(nil, attribute.Int("S", 1), lim),
	} {
		if !bytes.Equal(got, want) {
			t.Errorf("%s: % x, want % x", name, got, want)
		}
	}
	nested := AppendMapAttr(nil, "m", []attribute.KeyValue{attribute.Int("s", 1), attribute.Int("t", 2)}, lim)
	wantNested := AppendAttr(nil, attribute.KeyValue{Key: "m", Value: attribute.MapValue(attribute.String("s", Redacted), attribute.Int("t", 2))}, Limits{AttributeCount: -1, ValueLength: -1})
	if !bytes.Equal(nested, wantNested) {
		t.Errorf("nested: % x, want % x", nested, wantNested)
	}
}
