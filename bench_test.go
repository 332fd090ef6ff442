package zaplens

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zaplens/zaplens/otlplog"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// These measure the bridge alone: the provider's loggers discard what they
// get, so nothing of the OTel SDK is in the figures. benchmarks/ compares
// the whole cost with the official bridge on the real SDK.

func BenchmarkBridgeOnly(b *testing.B) {
	ctx, _ := spanContext(b)
	fields := []zap.Field{Context(ctx), zap.Int("step", 12), zap.Float64("loss", 0.41),
		zap.Float64("lr", 3e-4), zap.Int("tokens", 1<<20), zap.String("phase", "train")}
	err := errors.New("boom")
	for _, bc := range []struct {
		name   string
		logger *zap.Logger
		log    func(*zap.Logger)
	}{
		{"zap-alone", zap.New(jsonDiscard()), func(l *zap.Logger) { l.Info("step done", fields...) }},
		{"tee", zap.New(NewTee(jsonDiscard(), WithLoggerProvider(discardProvider{}))), func(l *zap.Logger) { l.Info("step done", fields...) }},
		{"core", zap.New(NewCore(WithLoggerProvider(discardProvider{}))), func(l *zap.Logger) { l.Info("step done", fields...) }},
		{"core-with", zap.New(NewCore(WithLoggerProvider(discardProvider{}))).Named("megatron").With(fields[1:]...),
			func(l *zap.Logger) { l.Info("step done", fields[0], zap.Int("micro", 3)) }},
		{"core-below-level", zap.New(NewCore(WithLoggerProvider(discardProvider{}))), func(l *zap.Logger) { l.Debug("step done", fields...) }},
		{"core-error", zap.New(NewCore(WithLoggerProvider(discardProvider{}))), func(l *zap.Logger) { l.Error("failed", fields[0], zap.Error(err)) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				bc.log(bc.logger)
			}
		})
	}
}

// caseOneFields are the fields of the benchmarks' case 1: five fields and
// a context.
func caseOneFields(ctx context.Context) []zap.Field {
	return []zap.Field{Context(ctx), zap.Int("step", 12), zap.Float64("loss", 0.41),
		zap.Float64("lr", 3e-4), zap.Int("tokens", 1<<20), zap.String("phase", "train")}
}

// BenchmarkWire measures the bridge on a zaplens provider: each entry is
// encoded to OTLP bytes and queued; the requests are built and handed to an
// export that discards them, so the figures are the whole pipeline's but
// the network's.
func BenchmarkWire(b *testing.B) {
	cleanEnv(b)
	ctx, _ := spanContext(b)
	fields := caseOneFields(ctx)
	p, err := otlplog.NewLoggerProvider(context.Background(), otlplog.WithLossWriter(nil),
		withDiscardExport())
	if err != nil {
		b.Fatal(err)
	}
	defer p.Shutdown(context.Background())
	for _, bc := range []struct {
		name   string
		logger *zap.Logger
	}{
		{"tee", zap.New(NewTee(jsonDiscard(), WithLoggerProvider(p)))},
		{"core", zap.New(NewCore(WithLoggerProvider(p)))},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				bc.logger.Info("step done", fields...)
			}
			_ = p.ForceFlush(context.Background())
		})
	}
	if s := p.Stats(); s.Dropped+s.Failed > 0 {
		b.Logf("losses: %v", s)
	}
}

// BenchmarkWireFieldKinds is case 1's line on a zaplens provider with one
// more field of a kind that runs user code (kind=error: zap.Error of a
// wrapped error; stringer; time; object: three fields; array: four ints;
// any: a map of three through zap.Any, a reflected value),
// against the line alone (kind=none): what such a field adds to the
// bridge.
func BenchmarkWireFieldKinds(b *testing.B) {
	cleanEnv(b)
	ctx, _ := spanContext(b)
	p, err := otlplog.NewLoggerProvider(context.Background(), otlplog.WithLossWriter(nil), withDiscardExport())
	if err != nil {
		b.Fatal(err)
	}
	defer p.Shutdown(context.Background())
	l := zap.New(NewCore(WithLoggerProvider(p)))
	wrapped := fmt.Errorf("read config: %w", errors.New("connection refused"))
	for _, bc := range []struct {
		name  string
		field zap.Field
	}{
		{"none", zap.Skip()},
		{"error", zap.Error(wrapped)},
		{"stringer", zap.Stringer("level", zapcore.WarnLevel)},
		{"time", zap.Time("started", time.Date(2026, 12, 2, 3, 41, 9, 123456789, time.UTC))},
		{"object", zap.Object("req", benchRequest{method: "GET", path: "/v1/items", status: 200})},
		{"array", zap.Ints("ranks", []int{0, 1, 2, 3})},
		{"any", zap.Any("req", map[string]any{"method": "GET", "path": "/v1/items", "status": 200})},
	} {
		fields := append(caseOneFields(ctx), bc.field)
		b.Run("kind="+bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				l.Info("step done", fields...)
			}
		})
	}
}

// benchRequest is an object as services log one.
type benchRequest struct {
	method, path string
	status       int
}

func (r benchRequest) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	enc.AddString("method", r.method)
	enc.AddString("path", r.path)
	enc.AddInt("status", r.status)
	return nil
}

// BenchmarkCallParts splits the logging call of case 1 (Info, five fields
// and a context) through a tee on a zaplens provider into its parts, each
// case adding one to the last: zap alone; the tee with the bridge filtered
// out and no ids (what the tee itself costs); the ids in base's line; the
// bridge, encoding to OTLP and queueing, with an export that discards;
// the same with log.record.uid (otlplog.WithRecordUID).
// zap-two-more-strings is zap alone with two more string fields the
// lengths of the ids: zap's own share of the ids' cost.
// cpu-ns/op is the whole process's CPU per call, the export goroutine's
// included.
func BenchmarkCallParts(b *testing.B) {
	cleanEnv(b)
	ctx, _ := spanContext(b)
	fields := caseOneFields(ctx)
	p, err := otlplog.NewLoggerProvider(context.Background(), otlplog.WithLossWriter(nil), withDiscardExport())
	if err != nil {
		b.Fatal(err)
	}
	defer p.Shutdown(context.Background())
	withUID, err := otlplog.NewLoggerProvider(context.Background(), otlplog.WithLossWriter(nil), withDiscardExport(), otlplog.WithRecordUID(true))
	if err != nil {
		b.Fatal(err)
	}
	defer withUID.Shutdown(context.Background())
	offBridge := WithLoggerName("elsewhere")
	// What zap's own encoder does for the ids: two strings of their keys'
	// and values' lengths, no bridge.
	twoStrings := []zap.Field{zap.String("trace_id", strings.Repeat("a", 32)), zap.String("span_id", strings.Repeat("b", 16))}
	for _, bc := range []struct {
		name   string
		logger *zap.Logger
		before []zap.Field // logged ahead of the line's own fields
	}{
		{"zap-alone", zap.New(jsonDiscard()), nil},
		{"zap-two-more-strings", zap.New(jsonDiscard()), twoStrings},
		{"tee-mechanics", zap.New(NewTee(jsonDiscard(), WithLoggerProvider(p), offBridge, WithIDFormat(nil))), nil},
		{"tee-ids", zap.New(NewTee(jsonDiscard(), WithLoggerProvider(p), offBridge)), nil},
		{"tee-ids-bridge", zap.New(NewTee(jsonDiscard(), WithLoggerProvider(p))), nil},
		{"tee-ids-bridge-uid", zap.New(NewTee(jsonDiscard(), WithLoggerProvider(withUID))), nil},
	} {
		fields := append(slices.Clip(bc.before), fields...)
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := processCPU()
			for b.Loop() {
				bc.logger.Info("step done", fields...)
			}
			b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkEmit is a record other code emits straight to a zaplens
// provider's logger, with a nested map, a slice and a map body: every key
// made unique, at every level, as the SDK does.
func BenchmarkEmit(b *testing.B) {
	cleanEnv(b)
	p, err := otlplog.NewLoggerProvider(context.Background(), otlplog.WithLossWriter(nil), withDiscardExport())
	if err != nil {
		b.Fatal(err)
	}
	defer p.Shutdown(context.Background())
	l := p.Logger("emit")
	r := emitBenchRecord()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		l.Emit(ctx, r)
	}
}

// emitBenchRecord is the record the Emit benchmarks send: a map body, a
// string, a nested map and a slice.
func emitBenchRecord() log.Record {
	var r log.Record
	r.SetSeverity(log.SeverityInfo)
	r.SetBody(attribute.MapValue(attribute.String("msg", "step done"), attribute.Int("step", 3)))
	r.AddAttributes(attribute.String("phase", "train"),
		attribute.KeyValue{Key: "model", Value: attribute.MapValue(attribute.String("name", "gpt"), attribute.Int("layers", 24))},
		attribute.KeyValue{Key: "ranks", Value: attribute.SliceValue(attribute.IntValue(0), attribute.IntValue(1))})
	return r
}

// BenchmarkScope measures finding a logger name's scope, which every
// bridged entry does: one name, two names in turn, and in parallel each
// goroutine its own name, where the last-found cache is written by every
// goroutine in turn.
func BenchmarkScope(b *testing.B) {
	c := NewCore(WithLoggerProvider(discardProvider{}))
	names := []string{"megatron.training", "megatron.data", "rank.0", "rank.1", "rank.2", "rank.3", "rank.4", "rank.5"}
	for _, n := range names {
		c.b.scope(n)
	}
	b.Run("one-name", func(b *testing.B) {
		for b.Loop() {
			c.b.scope(names[0])
		}
	})
	b.Run("two-names-in-turn", func(b *testing.B) {
		i := 0
		for b.Loop() {
			c.b.scope(names[i&1])
			i++
		}
	})
	b.Run("parallel-own-name", func(b *testing.B) {
		var next atomic.Int32
		b.RunParallel(func(pb *testing.PB) {
			name := names[int(next.Add(1))%len(names)]
			for pb.Next() {
				c.b.scope(name)
			}
		})
	})
}
