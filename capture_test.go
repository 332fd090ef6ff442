package zaplens

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// capture is the real OTel SDK with an in-memory exporter behind a
// synchronous processor, so a record is readable as soon as Write returns.
type capture struct {
	mu   sync.Mutex
	recs []sdklog.Record
	lp   *sdklog.LoggerProvider
}

func newCapture(t testing.TB, opts ...sdklog.LoggerProviderOption) *capture {
	c := &capture{}
	opts = append(opts, sdklog.WithProcessor(sdklog.NewSimpleProcessor(c)))
	c.lp = sdklog.NewLoggerProvider(opts...)
	t.Cleanup(func() { _ = c.lp.Shutdown(context.Background()) })
	return c
}

func (c *capture) Export(_ context.Context, rs []sdklog.Record) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range rs {
		c.recs = append(c.recs, r.Clone())
	}
	return nil
}

func (*capture) Shutdown(context.Context) error   { return nil }
func (*capture) ForceFlush(context.Context) error { return nil }

func (c *capture) records() []sdklog.Record {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]sdklog.Record(nil), c.recs...)
}

// only returns the single record captured, failing otherwise.
func (c *capture) only(t testing.TB) sdklog.Record {
	t.Helper()
	rs := c.records()
	if len(rs) != 1 {
		t.Fatalf("captured %d records, want 1", len(rs))
	}
	return rs[0]
}

// attrs returns a record's attributes by key.
func attrs(r sdklog.Record) map[string]attribute.Value {
	m := map[string]attribute.Value{}
	r.WalkAttributes(func(kv attribute.KeyValue) bool {
		m[string(kv.Key)] = kv.Value
		return true
	})
	return m
}

// jsonBase is the user's own core: zap's JSON encoder into a buffer.
type jsonBase struct {
	buf  bytes.Buffer
	core zapcore.Core
}

func newJSONBase(level zapcore.LevelEnabler) *jsonBase {
	b := &jsonBase{}
	cfg := zap.NewProductionEncoderConfig()
	cfg.TimeKey = ""
	b.core = zapcore.NewCore(zapcore.NewJSONEncoder(cfg), zapcore.AddSync(&b.buf), level)
	return b
}

// lines decodes every line base wrote.
func (b *jsonBase) lines(t testing.TB) []map[string]any {
	t.Helper()
	var out []map[string]any
	dec := json.NewDecoder(&b.buf)
	for dec.More() {
		m := map[string]any{}
		if err := dec.Decode(&m); err != nil {
			t.Fatalf("base wrote bad JSON: %v", err)
		}
		out = append(out, m)
	}
	return out
}
