package zaplens

import (
	"bytes"
	"context"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// requestID is a feature of the ctxAttrs kind made for the test: the
// request id a context carries, as "request.id". Its option and this type
// are all it is: no other code of the bridge knows it.
type requestID struct{ n int }

type requestIDKey struct{}

func (r *requestID) appendAttrs(dst []attribute.KeyValue, ctx context.Context) []attribute.KeyValue {
	if id, ok := ctx.Value(requestIDKey{}).(string); ok {
		dst = append(dst, attribute.String("request.id", id))
	}
	return dst
}

func withRequestID() Option {
	return optionFunc(func(c *config) { ctxAttrsOf[requestID](c).n++ })
}

// A feature that adds attributes from the context goes through the one
// slot, and so both ways write it, from the entry's context and from
// With's, beside WithBaggage's.
func TestCtxAttrsSlotBothWays(t *testing.T) {
	cleanEnv(t)
	ctx := context.WithValue(withTestBaggage(t, context.Background(), "tenant", "acme"), requestIDKey{}, "r-1")

	// The general way, on the SDK.
	c := newCapture(t)
	l := zap.New(NewCore(WithLoggerProvider(c.lp), withRequestID(), WithBaggage()))
	l.Info("own", Context(ctx), zap.Int("n", 1))
	l.With(Context(ctx)).Info("with's")
	for _, r := range c.records() {
		a := attrs(r)
		if a["request.id"].AsString() != "r-1" || a["tenant"].AsString() != "acme" {
			t.Errorf("general way, %q: %v", r.Body().AsString(), a)
		}
	}
	if n := len(c.records()); n != 2 {
		t.Fatalf("%d records, want 2", n)
	}

	// The direct way, on ours: it takes the entry, writes what the
	// general way writes, the feature's attribute among it.
	wc, lim := wireCore(t)
	core := NewCore(WithLoggerProvider(wc.b.provider), withRequestID(), WithBaggage())
	ent := zapcore.Entry{Message: "m", Time: diffEpoch}
	for _, tc := range []struct {
		name   string
		core   *Core
		fields []zapcore.Field
	}{
		{"own", core, []zapcore.Field{Context(ctx), zap.Int("n", 1)}},
		{"with's", core.With([]zapcore.Field{Context(ctx)}).(*Core), []zapcore.Field{zap.Int("n", 1)}},
	} {
		got, ok := directBytes(tc.core, ent, tc.fields, lim)
		if !ok {
			t.Fatalf("%s: the direct way did not take it", tc.name)
		}
		if want := generalBytes(tc.core, ent, tc.fields, lim); !bytes.Equal(got, want) {
			t.Errorf("%s:\n direct  %x\n general %x", tc.name, got, want)
		}
		if !bytes.Contains(got, []byte("request.id")) || !bytes.Contains(got, []byte("r-1")) {
			t.Errorf("%s: the direct way wrote no request.id", tc.name)
		}
	}
}

// An option given twice adds to its own feature: one slot entry, whose
// attributes are written once.
func TestCtxAttrsOptionTwice(t *testing.T) {
	cfg := newConfig([]Option{WithBaggage("a"), withRequestID(), WithBaggage("b"), withRequestID()})
	if len(cfg.ctxAttrs) != 2 {
		t.Fatalf("%d features in the slot, want 2", len(cfg.ctxAttrs))
	}
	if b := cfg.ctxAttrs[0].(*baggageKeys); len(b.keys) != 2 || b.all {
		t.Errorf("WithBaggage twice: %+v", b)
	}
	if r := cfg.ctxAttrs[1].(*requestID); r.n != 2 {
		t.Errorf("the test option twice: %+v", r)
	}
}
