//go:build peersuite

package otelzap

import (
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/log/logtest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/zaplens/zaplens"
)

// The construction: the official bridge's names, built on zaplens.

type config struct {
	provider log.LoggerProvider
}

// Option is the official bridge's option; zaplens has no scope version,
// schema URL or scope attributes, so those options do nothing.
type Option interface{ apply(config) config }

type optFunc func(config) config

func (f optFunc) apply(c config) config { return f(c) }

func WithVersion(string) Option                   { return optFunc(func(c config) config { return c }) }
func WithSchemaURL(string) Option                 { return optFunc(func(c config) config { return c }) }
func WithAttributes(...attribute.KeyValue) Option { return optFunc(func(c config) config { return c }) }

func WithLoggerProvider(p log.LoggerProvider) Option {
	return optFunc(func(c config) config { c.provider = p; return c })
}

// Core is zaplens's core under the official bridge's name. logger is the
// logger the official bridge asks of its provider in NewCore; zaplens asks
// for it at the first entry, so it stays nil.
type Core struct {
	*zaplens.Core
	logger log.Logger
}

// NewCore is zaplens.NewCore with name as the default scope and every
// level sent, as the official bridge sends every level its provider takes.
func NewCore(name string, opts ...Option) *Core {
	var c config
	for _, o := range opts {
		c = o.apply(c)
	}
	zopts := []zaplens.Option{zaplens.WithDefaultScope(name), zaplens.WithLevel(zapcore.DebugLevel)}
	if c.provider != nil {
		zopts = append(zopts, zaplens.WithLoggerProvider(c.provider))
	}
	return &Core{Core: zaplens.NewCore(zopts...)}
}

const (
	maxConvertDepth  = 100
	maxDepthExceeded = "<max-depth-exceeded>"
)

// write writes one entry through a zaplens core to a recorder and returns
// its record.
func write(ent zapcore.Entry, fields ...zapcore.Field) (logtest.Record, bool) {
	rec := logtest.NewRecorder()
	c := zaplens.NewCore(zaplens.WithLoggerProvider(rec), zaplens.WithLevel(zapcore.DebugLevel))
	_ = c.Write(ent, fields)
	for _, rs := range rec.Result() {
		for _, r := range rs {
			return r, true
		}
	}
	return logtest.Record{}, false
}

// convertLevel is the severity zaplens gives an entry at level.
func convertLevel(level zapcore.Level) log.Severity {
	r, _ := write(zapcore.Entry{Level: level})
	return r.Severity
}

// convertValue is what zaplens makes of v given to zap.Reflect.
func convertValue(v any) attribute.Value {
	r, _ := write(zapcore.Entry{Level: zapcore.InfoLevel}, zap.Reflect("k", v))
	for _, kv := range r.Attributes {
		if kv.Key == "k" {
			return kv.Value
		}
	}
	return attribute.Value{}
}

// objectEncoder runs the calls made on it so far, in order, as an inline
// object of one entry through zaplens, once a call: a call's error is
// zaplens's, and calculate leaves in root the attributes of the entry.
type objectEncoder struct {
	root *namespace
	ops  []func(zapcore.ObjectEncoder) error
}

type namespace struct{ attrs []attribute.KeyValue }

func newObjectEncoder(int) *objectEncoder { return &objectEncoder{root: &namespace{}} }

func (m *objectEncoder) calculate(*namespace) { m.root.attrs, _ = m.run() }

func (m *objectEncoder) run() ([]attribute.KeyValue, error) {
	var err error
	r, _ := write(zapcore.Entry{Level: zapcore.InfoLevel}, zap.Inline(zapcore.ObjectMarshalerFunc(func(enc zapcore.ObjectEncoder) error {
		for _, op := range m.ops {
			err = op(enc)
		}
		return nil
	})))
	return r.Attributes, err
}

func (m *objectEncoder) do(op func(zapcore.ObjectEncoder) error) error {
	m.ops = append(m.ops, op)
	_, err := m.run()
	return err
}

func (m *objectEncoder) add(op func(zapcore.ObjectEncoder)) {
	_ = m.do(func(e zapcore.ObjectEncoder) error { op(e); return nil })
}

func (m *objectEncoder) AddArray(k string, v zapcore.ArrayMarshaler) error {
	return m.do(func(e zapcore.ObjectEncoder) error { return e.AddArray(k, v) })
}
func (m *objectEncoder) AddObject(k string, v zapcore.ObjectMarshaler) error {
	return m.do(func(e zapcore.ObjectEncoder) error { return e.AddObject(k, v) })
}
func (m *objectEncoder) AddReflected(k string, v any) error {
	return m.do(func(e zapcore.ObjectEncoder) error { return e.AddReflected(k, v) })
}
func (m *objectEncoder) AddBinary(k string, v []byte) {
	m.add(func(e zapcore.ObjectEncoder) { e.AddBinary(k, v) })
}
func (m *objectEncoder) AddByteString(k string, v []byte) {
	m.add(func(e zapcore.ObjectEncoder) { e.AddByteString(k, v) })
}
func (m *objectEncoder) AddBool(k string, v bool) {
	m.add(func(e zapcore.ObjectEncoder) { e.AddBool(k, v) })
}
func (m *objectEncoder) AddComplex128(k string, v complex128) {
	m.add(func(e zapcore.ObjectEncoder) { e.AddComplex128(k, v) })
}
func (m *objectEncoder) AddComplex64(k string, v complex64) {
	m.add(func(e zapcore.ObjectEncoder) { e.AddComplex64(k, v) })
}
func (m *objectEncoder) AddDuration(k string, v time.Duration) {
	m.add(func(e zapcore.ObjectEncoder) { e.AddDuration(k, v) })
}
func (m *objectEncoder) AddFloat64(k string, v float64) {
	m.add(func(e zapcore.ObjectEncoder) { e.AddFloat64(k, v) })
}
func (m *objectEncoder) AddFloat32(k string, v float32) {
	m.add(func(e zapcore.ObjectEncoder) { e.AddFloat32(k, v) })
}
func (m *objectEncoder) AddInt(k string, v int) {
	m.add(func(e zapcore.ObjectEncoder) { e.AddInt(k, v) })
}
func (m *objectEncoder) AddInt64(k string, v int64) {
	m.add(func(e zapcore.ObjectEncoder) { e.AddInt64(k, v) })
}
func (m *objectEncoder) AddInt32(k string, v int32) {
	m.add(func(e zapcore.ObjectEncoder) { e.AddInt32(k, v) })
}
func (m *objectEncoder) AddInt16(k string, v int16) {
	m.add(func(e zapcore.ObjectEncoder) { e.AddInt16(k, v) })
}
func (m *objectEncoder) AddInt8(k string, v int8) {
	m.add(func(e zapcore.ObjectEncoder) { e.AddInt8(k, v) })
}
func (m *objectEncoder) AddString(k, v string) {
	m.add(func(e zapcore.ObjectEncoder) { e.AddString(k, v) })
}
func (m *objectEncoder) AddTime(k string, v time.Time) {
	m.add(func(e zapcore.ObjectEncoder) { e.AddTime(k, v) })
}
func (m *objectEncoder) AddUint(k string, v uint) {
	m.add(func(e zapcore.ObjectEncoder) { e.AddUint(k, v) })
}
func (m *objectEncoder) AddUint64(k string, v uint64) {
	m.add(func(e zapcore.ObjectEncoder) { e.AddUint64(k, v) })
}
func (m *objectEncoder) AddUint32(k string, v uint32) {
	m.add(func(e zapcore.ObjectEncoder) { e.AddUint32(k, v) })
}
func (m *objectEncoder) AddUint16(k string, v uint16) {
	m.add(func(e zapcore.ObjectEncoder) { e.AddUint16(k, v) })
}
func (m *objectEncoder) AddUint8(k string, v uint8) {
	m.add(func(e zapcore.ObjectEncoder) { e.AddUint8(k, v) })
}
func (m *objectEncoder) AddUintptr(k string, v uintptr) {
	m.add(func(e zapcore.ObjectEncoder) { e.AddUintptr(k, v) })
}
func (m *objectEncoder) OpenNamespace(k string) {
	m.add(func(e zapcore.ObjectEncoder) { e.OpenNamespace(k) })
}
