package zapfield

import (
	"bytes"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/zaplens/zaplens/internal/otlpwire"
	"github.com/zaplens/zaplens/internal/zapfield/fieldtest"
)

// Every value past the depth bound becomes JSON text with the redacted
// keys' values redacted, by Entry.Redact, whichever encoder makes the
// text: the entry's own (an object, an array of arrays, a reflected
// value) and those of a value's elements (an object inside an array,
// which an encoder of its own writes). Both ways, the direct one writing
// what it converted the general way. Without a redactor the text is kept
// whole. The bridge's TestRedactEveryWayOut holds the same through its
// providers, core and tee.
func TestRedactPastTheDepthBound(t *testing.T) {
	fields := []zapcore.Field{
		zap.Object("obj", fieldtest.DeepObject{N: 40, Secret: "s3cret-object"}),
		zap.Array("arr", fieldtest.DeepArray{N: 40, Secret: "s3cret-array"}),
		zap.Array("objs", zapcore.ArrayMarshalerFunc(func(a zapcore.ArrayEncoder) error {
			return a.AppendObject(fieldtest.DeepObject{N: 40, Secret: "s3cret-element"})
		})),
		zap.Any("any", fieldtest.DeepMap(40, "s3cret-any")),
		zap.Any("json", fieldtest.DeepJSON{N: 40, Secret: "s3cret-json"}),
	}
	const redacted = `"token":"[redacted]"` // inside the JSON text, as the record's bytes hold it
	var rec otlpwire.Record
	for _, r := range []*otlpwire.Redactor{otlpwire.NewRedactor("token"), nil} {
		e := GetEncoder()
		e.Entry.Redact = r
		general := otlpwire.AppendRecord(nil, &rec, e.Attributes(&With{}, &zapcore.Entry{}, fields), otlpwire.DefaultLimits)
		PutEncoder(e)
		e = GetEncoder()
		e.Entry.Redact = r
		direct, ok := e.AppendDirect(nil, &With{}, &rec, &zapcore.Entry{}, fields, otlpwire.DefaultLimits)
		PutEncoder(e)
		if !ok {
			t.Fatal("the direct way did not take the entry")
		}
		for way, b := range map[string][]byte{"general": general, "direct": direct} {
			secrets, marks := strings.Count(string(b), "s3cret"), strings.Count(string(b), redacted)
			if r != nil && (secrets != 0 || marks != len(fields)) {
				t.Errorf("%s way, redacting: %d secrets sent, %d values redacted, want 0 and %d", way, secrets, marks, len(fields))
			}
			if r == nil && (secrets != len(fields) || marks != 0) {
				t.Errorf("%s way, not redacting: %d secrets sent, %d values redacted, want %d and 0", way, secrets, marks, len(fields))
			}
		}
		if !bytes.Equal(general, direct) {
			t.Errorf("the ways differ (redactor %v):\n general %q\n direct  %q", r != nil, general, direct)
		}
	}
}
