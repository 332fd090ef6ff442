package zaplens

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zaplens/zaplens/otlplog"

	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// fileExporter appends each record's body to a file: what a child process
// exported survives its exit.
type fileExporter struct{ path string }

func (e fileExporter) Export(_ context.Context, rs []sdklog.Record) error {
	f, err := os.OpenFile(e.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	for _, r := range rs {
		if _, err := f.WriteString(r.Body().AsString() + "\n"); err != nil {
			return err
		}
	}
	return nil
}

func (fileExporter) Shutdown(context.Context) error   { return nil }
func (fileExporter) ForceFlush(context.Context) error { return nil }

// batchingLogger bridges to a batching provider that, left alone, would
// export nothing for an hour.
func batchingLogger(exp sdklog.Exporter) *zap.Logger {
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(
		sdklog.NewBatchProcessor(exp, sdklog.WithExportInterval(time.Hour))))
	return zap.NewNop().WithOptions(WrapCore(WithLoggerProvider(lp)))
}

const fatalChildEnv = "ZAPLENS_FATAL_CHILD"

// TestFatalIsFlushed re-runs the test binary as a child that logs at Fatal;
// zap calls os.Exit right after the cores' Write, so the line must have left
// the batch queue inside Write.
func TestFatalIsFlushed(t *testing.T) {
	if path := os.Getenv(fatalChildEnv); path != "" {
		logger := batchingLogger(fileExporter{path})
		logger.Info("before")
		logger.Fatal("last words")
		return
	}
	if got := runFatalChild(t, "TestFatalIsFlushed", fatalChildEnv); got != "before\nlast words\n" {
		t.Errorf("child exported %q, want both lines", got)
	}
}

// runFatalChild runs test as a child that exports to the file named in its
// variable pathEnv and ends in zap's Fatal: it must exit with status 1. It
// returns what the child exported.
func runFatalChild(t *testing.T, test, pathEnv string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "exported")
	err := childCommand(test, pathEnv+"="+out).Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("child ended with %v, want exit status 1", err)
	}
	got, _ := os.ReadFile(out)
	return string(got)
}

func TestPanicIsFlushed(t *testing.T) {
	var exp capture
	logger := batchingLogger(&exp)
	func() {
		defer func() { _ = recover() }()
		logger.Panic("panicking")
	}()
	rs := exp.records()
	if len(rs) != 1 || !strings.Contains(rs[0].Body().AsString(), "panicking") {
		t.Errorf("exported %d records before the panic reached the caller, want 1", len(rs))
	}
}

const filteredFatalChildEnv = "ZAPLENS_FILTERED_FATAL_CHILD"

// A Fatal from a logger the bridge filters out still flushes what other
// loggers queued before zap exits.
func TestFatalFromFilteredLoggerFlushes(t *testing.T) {
	if path := os.Getenv(filteredFatalChildEnv); path != "" {
		lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(
			sdklog.NewBatchProcessor(fileExporter{path}, sdklog.WithExportInterval(time.Hour))))
		logger := zap.NewNop().WithOptions(WrapCore(WithLoggerProvider(lp), WithLoggerName("train")))
		logger.Named("train").Info("queued")
		logger.Named("main").Fatal("bye")
		return
	}
	if got := runFatalChild(t, "TestFatalFromFilteredLoggerFlushes", filteredFatalChildEnv); got != "queued\n" {
		t.Errorf("child exported %q, want the queued line", got)
	}
}

// A production DPanic is an error line: it does not wait for a flush, which
// a collector that never answers would make last the flush bound. In
// development zap panics after it, so it flushes first.
func TestDPanicFlushesOnlyInDevelopment(t *testing.T) {
	cleanEnv(t)
	exp := &memExporter{Block: make(chan struct{})}
	defer close(exp.Block)
	p := newTestProvider(t, withExporter(exp), otlplog.WithScheduleDelay(time.Hour))
	for _, build := range []func(zapcore.Core) *zap.Logger{
		func(c zapcore.Core) *zap.Logger { return zap.New(NewTee(c, WithLoggerProvider(p))) },
		func(c zapcore.Core) *zap.Logger { return zap.New(zapcore.NewTee(c, NewCore(WithLoggerProvider(p)))) },
	} {
		logger := build(zapcore.NewNopCore())
		start := time.Now()
		logger.DPanic("production dpanic")
		if d := time.Since(start); d > time.Second {
			t.Errorf("a production DPanic took %v", d)
		}
	}
	_ = shutdownWithin(p, 100*time.Millisecond)

	exp2 := &memExporter{}
	p2 := newTestProvider(t, withExporter(exp2), otlplog.WithScheduleDelay(time.Hour))
	for i, logger := range []*zap.Logger{
		zap.New(NewTee(zapcore.NewNopCore(), WithLoggerProvider(p2)), zap.Development()),
		zap.New(NewCore(WithLoggerProvider(p2)), zap.Development()),
	} {
		func() {
			defer func() { _ = recover() }()
			logger.DPanic("development dpanic")
		}()
		if n := exp2.Len(); n != i+1 {
			t.Errorf("logger %d: %d records exported before the panic reached the caller, want %d", i, n, i+1)
		}
	}
	_ = p2.Shutdown(context.Background())
}

// A DPanic, Panic or Fatal entry is taken past Check to flush what is
// queued, but it is bridged only if the bridge's own filters take it:
// below WithLevel, or outside the logger names, it is not sent.
func TestTerminalEntryKeepsTheFilters(t *testing.T) {
	cleanEnv(t)
	for _, tc := range []struct {
		name string
		opts []Option
	}{
		{"below the level", []Option{WithLevel(zapcore.FatalLevel)}},
		{"outside the names", []Option{WithLoggerName("megatron")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCapture(t)
			core := NewCore(append(tc.opts, WithLoggerProvider(c.lp))...)
			zap.New(core).DPanic("production dpanic")
			if err := core.Write(zapcore.Entry{Level: zapcore.DPanicLevel, Message: "written directly"}, nil); err != nil {
				t.Fatal(err)
			}
			if n := len(c.records()); n != 0 {
				t.Errorf("%d records sent, want none", n)
			}
		})
	}
}
