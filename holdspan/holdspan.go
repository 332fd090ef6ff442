// Package holdspan is the span processor of zaplens's hold (zaplens.WithHold):
// registered on the program's sdk/trace TracerProvider, it ships a trace's
// held entries when a span of it ends with an error, and frees them when
// the trace's local root span ends without one. It is a package of its
// own so that a bridge-only program does not link sdk/trace.
package holdspan

import (
	"context"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/zaplens/zaplens"
)

// Processor is an sdktrace.SpanProcessor that tells zaplens's bridges how
// their traces end. It holds nothing itself.
type Processor struct{}

// New returns the processor, for sdktrace.WithSpanProcessor.
func New() *Processor { return &Processor{} }

// OnStart does nothing: a trace is held from its first held entry.
func (*Processor) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

// OnEnd ships the trace's held entries when s ended with an error (a
// handler that returned a 5xx through otelhttp, say, with no error
// logged), and frees them when s is the trace's local root: its parent is
// none, or in another process.
func (*Processor) OnEnd(s sdktrace.ReadOnlySpan) {
	id := s.SpanContext().TraceID()
	if s.Status().Code == codes.Error {
		zaplens.ShipHeld(id)
	}
	if p := s.Parent(); !p.IsValid() || p.IsRemote() {
		zaplens.ReleaseHeld(id)
	}
}

// Shutdown does nothing.
func (*Processor) Shutdown(context.Context) error { return nil }

// ForceFlush does nothing: what a trace holds waits for its end.
func (*Processor) ForceFlush(context.Context) error { return nil }
