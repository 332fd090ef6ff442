package zaplens

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/log/embedded"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.uber.org/zap"
)

const reentryChildEnv = "ZAPLENS_REENTRY_CHILD"

// The SDK's internal logger pointed back at a bridged logger: the SDK warns
// under a sync.Once, from inside Emit, when a record goes over the attribute
// limit, and the warning's own record goes over it too. The Once fires once
// per process, so the scenario runs in a child of its own, where only
// zaplens's init has run before it.
func TestInternalLoggerPointedBack(t *testing.T) {
	if os.Getenv(reentryChildEnv) != "" {
		internalLoggerPointedBack()
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestInternalLoggerPointedBack$", "-test.v")
	cmd.Env = append(os.Environ(), reentryChildEnv+"=1")
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("deadlock: the child did not finish\n%s", out)
	}
	if err != nil || !strings.Contains(string(out), "records=3 lost=0") {
		t.Errorf("child: %v\n%s", err, out)
	}
}

func internalLoggerPointedBack() {
	var exp capture
	lp := sdklog.NewLoggerProvider(sdklog.WithAttributeCountLimit(2), sdklog.WithProcessor(sdklog.NewSimpleProcessor(&exp)))
	core := NewCore(WithLoggerProvider(lp))
	logger := zap.New(core).With(zap.Int("a", 1), zap.Int("b", 2), zap.Int("c", 3))
	otel.SetLogger(funcr.New(func(prefix, args string) { logger.Warn(prefix + args) }, funcr.Options{Verbosity: 10}))
	logger.Info("over the limit")
	logger.Info("a key twice", zap.Int("a", 4))
	logger.Info("an empty key", zap.Int("", 5))
	fmt.Printf("records=%d lost=%d\n", len(exp.records()), core.Lost())
}

func TestEmitCodeRange(t *testing.T) {
	f := runtime.FuncForPC(emitCode.start)
	if f == nil || f.Name() != "github.com/zaplens/zaplens.(*bridge).emit" {
		t.Fatalf("emitCode starts in %v", f)
	}
	if g := runtime.FuncForPC(emitCode.end); g != nil && g.Entry() == emitCode.start {
		t.Errorf("emitCode ends inside emit")
	}
	if g := runtime.FuncForPC(emitCode.end - 1); g == nil || g.Entry() != emitCode.start {
		t.Errorf("emitCode ends before emit does")
	}
}

// chattyProvider logs, through a bridged logger, each scope it is asked for.
type chattyProvider struct {
	embedded.LoggerProvider
	inner  log.LoggerProvider
	logger *atomic.Pointer[zap.Logger]
}

func (p chattyProvider) Logger(name string, opts ...log.LoggerOption) log.Logger {
	if l := p.logger.Load(); l != nil && name != "chatty" {
		l.Named("chatty").Warn("new scope", zap.String("scope", name))
	}
	return p.inner.Logger(name, opts...)
}

// A provider that logs back into the bridge while it makes a logger does
// not deadlock the scope cache.
func TestProviderLogsWhileMakingLogger(t *testing.T) {
	c := newCapture(t)
	var ptr atomic.Pointer[zap.Logger]
	logger := zap.New(NewCore(WithLoggerProvider(chattyProvider{inner: c.lp, logger: &ptr})))
	ptr.Store(logger)
	done := make(chan struct{})
	go func() {
		defer close(done)
		logger.Named("train").Info("m")
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("deadlock")
	}
	if n := len(c.records()); n != 2 {
		t.Errorf("got %d records, want the scope notice and the line", n)
	}
}
