package zaplens

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/zaplens/zaplens/internal/direct"
	"github.com/zaplens/zaplens/otlplog"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"
)

// redactProcessor is the sdk/log package's RedactTokensProcessor example
// made otlplog.WithRedactKeys's rule: the value of every attribute whose key is
// one of keys, ignoring case, at any depth (map entries in attributes and
// in a map body, maps in slices), becomes "[redacted]". Registered before
// the batch processor, it changes the record that one then exports.
// docs/opentelemetry.md shows it to users of their own provider.
type redactProcessor struct{ keys []string }

func (p redactProcessor) match(k string) bool {
	for _, key := range p.keys {
		if strings.EqualFold(key, k) {
			return true
		}
	}
	return false
}

// redact returns v with what matches redacted, and whether anything did.
func (p redactProcessor) redact(v attribute.Value) (attribute.Value, bool) {
	switch v.Type() {
	case attribute.MAP:
		kvs := append([]attribute.KeyValue(nil), v.AsMap()...)
		changed := false
		for i, kv := range kvs {
			if p.match(string(kv.Key)) {
				kvs[i].Value, changed = attribute.StringValue("[redacted]"), true
			} else if nv, ok := p.redact(kv.Value); ok {
				kvs[i].Value, changed = nv, true
			}
		}
		if changed {
			return attribute.MapValue(kvs...), true
		}
	case attribute.SLICE:
		vs := append([]attribute.Value(nil), v.AsSlice()...)
		changed := false
		for i, e := range vs {
			if nv, ok := p.redact(e); ok {
				vs[i], changed = nv, true
			}
		}
		if changed {
			return attribute.SliceValue(vs...), true
		}
	}
	return v, false
}

func (redactProcessor) Enabled(context.Context, sdklog.EnabledParameters) bool { return true }

func (p redactProcessor) OnEmit(_ context.Context, r *sdklog.Record) error {
	var redacted []attribute.KeyValue
	r.WalkAttributes(func(kv attribute.KeyValue) bool {
		if p.match(string(kv.Key)) {
			redacted = append(redacted, attribute.String(string(kv.Key), "[redacted]"))
		} else if v, ok := p.redact(kv.Value); ok {
			redacted = append(redacted, attribute.KeyValue{Key: kv.Key, Value: v})
		}
		return true
	})
	r.AddAttributes(redacted...) // the same keys: each replaced in place
	if v, ok := p.redact(r.Body()); ok {
		r.SetBody(v)
	}
	return nil
}

func (redactProcessor) Shutdown(context.Context) error   { return nil }
func (redactProcessor) ForceFlush(context.Context) error { return nil }

// redactKeys hit every kind of value and place of the differential test's
// input: scalars, bytes, slices, maps and namespaces as a whole, entries of
// nested maps, of maps in slices and in bodies, With fields, the bridge's
// own attributes, exception attributes, attributes past the count limit,
// and keys in another case.
var redactKeys = []string{
	"INT", "float64", "True", "string", "binary", "bytes", "duration", "time",
	"object", "NAME", "dup", "K", "wns", "deeper", "exception.message", "code.file.path",
	"f100", "f140", "a100", "a150", "errs", "d", "j", "slice", "in", "w1", "i",
	"secret", "password", "api_key", "Authorization",
}

// redactScript logs secrets the ways a program may: flat, nested, in With,
// in a map given to zap.Any, in an error, in an emitted record's body.
func redactScript(l *zap.Logger, p log.LoggerProvider) {
	l.With(zap.String("api_key", "sk-with")).Info("login", zap.String("password", "hunter2"),
		zap.Any("config", map[string]any{"Authorization": "Bearer abc", "retries": 3}),
		zap.Object("user", diffObject{name: "ann", n: 1}),
		zap.Int("Secret", 42))
	l.Error("failed", zap.Error(errors.New("token=xyz leaked")), zap.Binary("SECRET", []byte("s3")))
	var r log.Record
	r.SetTimestamp(time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC))
	r.SetBody(attribute.MapValue(attribute.String("password", "body-pw"), attribute.String("msg", "hello")))
	r.AddAttributes(attribute.String("PassWord", "attr-pw"),
		attribute.KeyValue{Key: "list", Value: attribute.SliceValue(attribute.MapValue(attribute.String("secret", "in-slice")))})
	p.Logger("direct.redact").Emit(context.Background(), r)
}

// TestRedactMatchesSDK: otlplog.WithRedactKeys on ours and redactProcessor before
// the batch processor on the SDK's send the same records, bridged (the
// direct way and the general one, core and tee) and emitted, with the
// value length limit off and on.
func TestRedactMatchesSDK(t *testing.T) {
	for _, valueLen := range []int{-1, 4} {
		t.Run(map[int]string{-1: "no value limit", 4: "value limit 4"}[valueLen], func(t *testing.T) {
			cleanEnv(t)
			res := resource.NewSchemaless(attribute.String("service.name", "redact"))
			setup := diffSetup{
				sdk:        []sdklog.LoggerProviderOption{sdklog.WithResource(res)},
				processors: []sdklog.Processor{redactProcessor{keys: direct.RedactedKeys(redactKeys)}}, // with zap's derived keys, as ours
				ours: []otlplog.Option{otlplog.WithResource(res),
					otlplog.WithRedactKeys(redactKeys[:5]...), otlplog.WithRedactKeys(redactKeys[5:]...)},
			}
			if valueLen >= 0 {
				setup.sdk = append(setup.sdk, sdklog.WithAttributeValueLengthLimit(valueLen))
				setup.ours = append(setup.ours, otlplog.WithAttributeValueLengthLimit(valueLen))
			}
			pair := newDiffPairWith(t, setup)
			spans := newDiffSpans(t)
			bases := pair.drive(func(b diffBridges, p log.LoggerProvider) {
				diffScript(b.core, spans)
				diffScript(b.tee, spans)
				redactScript(b.core, p)
				redactScript(b.tee, p)
				diffDirect(p, spans)
			})
			n, report, ours := pair.compare(t, pair.start, diffBridgedScope)
			if report != "" {
				t.Fatal(report)
			}
			if n < 100 {
				t.Fatalf("only %d records compared", n)
			}
			var wire []byte
			for _, rl := range ours {
				b, err := proto.Marshal(rl)
				if err != nil {
					t.Fatal(err)
				}
				wire = append(wire, b...)
			}
			for _, secret := range []string{"hunter2", "sk-with", "Bearer abc", "body-pw", "attr-pw", "in-slice", "héllo"} {
				if bytes.Contains(wire, []byte(secret)) {
					t.Errorf("%q was sent", secret)
				}
			}
			// The base core is the program's own: untouched.
			for _, secret := range []string{"hunter2", "sk-with", "Bearer abc"} {
				if !strings.Contains(bases[0], secret) {
					t.Errorf("%q is not in base's output: base was redacted", secret)
				}
			}
			if valueLen < 0 && !bytes.Contains(wire, []byte("[redacted]")) {
				t.Error("nothing redacted")
			}
			t.Logf("%d records compared, equal", n)
		})
	}
}
