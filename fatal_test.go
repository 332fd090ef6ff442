package zaplens

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.uber.org/zap"
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
	out := filepath.Join(t.TempDir(), "exported")
	cmd := exec.Command(os.Args[0], "-test.run=^TestFatalIsFlushed$")
	cmd.Env = append(os.Environ(), fatalChildEnv+"="+out)
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("child ended with %v, want exit status 1", err)
	}
	got, _ := os.ReadFile(out)
	if string(got) != "before\nlast words\n" {
		t.Errorf("child exported %q, want both lines", got)
	}
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
