package holdspan_test

import (
	"context"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/codes"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/zaplens/zaplens"
	"github.com/zaplens/zaplens/holdspan"
)

type bodies struct {
	mu  sync.Mutex
	got []string
}

func (b *bodies) Export(_ context.Context, rs []sdklog.Record) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, r := range rs {
		b.got = append(b.got, r.Body().AsString())
	}
	return nil
}
func (*bodies) Shutdown(context.Context) error   { return nil }
func (*bodies) ForceFlush(context.Context) error { return nil }

func (b *bodies) list() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.got...)
}

// A span that ends with an error ships its trace's held lines though no
// error was logged; a trace whose root ends well has its lines freed.
func TestProcessor(t *testing.T) {
	out := &bodies{}
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewSimpleProcessor(out)))
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(holdspan.New()))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()); _ = lp.Shutdown(context.Background()) })
	core := zaplens.NewCore(zaplens.WithLoggerProvider(lp), zaplens.WithHold(zapcore.DebugLevel))
	l := zap.New(core)
	tracer := tp.Tracer("test")

	ctx, root := tracer.Start(context.Background(), "bad request")
	cctx, child := tracer.Start(ctx, "handler")
	l.Debug("read the body", zaplens.Context(cctx))
	l.Debug("called the store", zaplens.Context(cctx))
	child.SetStatus(codes.Error, "503 from the store")
	child.End()
	if got := out.list(); len(got) != 2 || got[0] != "read the body" || got[1] != "called the store" {
		t.Fatalf("after the handler's span ended in error, delivered %q: want its two Debug lines, in order", got)
	}
	l.Debug("after", zaplens.Context(ctx))
	root.End()
	if got := out.list(); len(got) != 3 {
		t.Fatalf("delivered %q: a failing trace's lines go straight through until it ends", got)
	}

	ctx, root = tracer.Start(context.Background(), "good request")
	l.Debug("fine", zaplens.Context(ctx))
	if s := core.HoldStats(); s.Entries != 1 {
		t.Fatalf("stats %+v: want the good request's line held", s)
	}
	root.End()
	if s := core.HoldStats(); s.Entries != 0 || s.Traces != 0 || s.Released != 1 {
		t.Errorf("after the good root ended, stats %+v: want its line released, no trace held", s)
	}
	if got := out.list(); len(got) != 3 {
		t.Errorf("delivered %q: the good request's line went out", got)
	}
}

// Example registers the processor beside the bridge's hold.
func Example() {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(holdspan.New()))
	defer tp.Shutdown(context.Background())
	logger := zap.New(zaplens.NewCore(zaplens.WithHold(zapcore.DebugLevel)))
	defer logger.Sync()
	// Output:
}
