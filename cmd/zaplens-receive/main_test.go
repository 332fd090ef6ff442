package main

import (
	"bufio"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.uber.org/zap"

	"github.com/zaplens/zaplens"
	"github.com/zaplens/zaplens/internal/testsupport"
	"github.com/zaplens/zaplens/otlplog"
)

// TestReceive builds zaplens-receive, runs it on free loopback ports, sends
// it log records through real zaplens pipelines over OTLP/gRPC and
// OTLP/HTTP (plain and gzip) and spans over OTLP/gRPC, and checks that each
// record is printed on a line of its own with its trace and span ids; then
// that SIGINT makes it print the summary grouped by trace and exit 0.
func TestReceive(t *testing.T) {
	for _, k := range []string{"OTEL_SDK_DISABLED", "OTEL_LOGS_EXPORTER", "OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_LOGS_HEADERS", "OTEL_EXPORTER_OTLP_COMPRESSION", "OTEL_EXPORTER_OTLP_LOGS_COMPRESSION"} {
		t.Setenv(k, "")
	}
	start := time.Now()
	bin := build(t)
	grpcAddr, httpAddr := testsupport.FreeAddr(t), testsupport.FreeAddr(t)
	p := startReceiver(t, bin, "-grpc", grpcAddr, "-http", httpAddr)
	t.Logf("built and started in %v", time.Since(start).Round(time.Millisecond))

	ctx := context.Background()
	texp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(grpcAddr), otlptracegrpc.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(texp))
	defer tp.Shutdown(ctx)
	tracer := tp.Tracer("test")

	type sent struct{ body, traceID, spanID string }
	var all []sent
	for _, c := range []struct {
		name string
		opts []otlplog.Option
	}{
		{"grpc", []otlplog.Option{otlplog.WithEndpoint("http://" + grpcAddr)}},
		{"http", []otlplog.Option{otlplog.WithProtocol("http/protobuf"), otlplog.WithEndpoint("http://" + httpAddr)}},
		{"http-gzip", []otlplog.Option{otlplog.WithProtocol("http/protobuf"), otlplog.WithEndpoint("http://" + httpAddr), otlplog.WithCompression("gzip")}},
	} {
		provider, err := otlplog.NewLoggerProvider(ctx, append(c.opts, otlplog.WithServiceName("receive-test"),
			otlplog.WithResourceAttributes(attribute.String("transport", c.name)))...)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		logger := zap.NewNop().WithOptions(zaplens.WrapCore(zaplens.WithLoggerProvider(provider))).Named("svc").Named(c.name)

		sctx, span := tracer.Start(ctx, "request "+c.name)
		body := "handled over " + c.name
		logger.Info(body, zaplens.Context(sctx), zap.Int("status", 200), zap.String("path", "/a b"))
		sc := span.SpanContext()
		all = append(all, sent{body, sc.TraceID().String(), sc.SpanID().String()})
		span.End()
		logger.Warn("no span over "+c.name, zap.Float64("ratio", 0.1))

		if err := provider.Shutdown(ctx); err != nil { // flushes; fails if a record was not delivered
			t.Fatalf("%s: %v", c.name, err)
		}
	}

	// Each record, on a line of its own, with its ids.
	for _, s := range all {
		line := p.waitLine(t, s.body)
		want := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z INFO  svc\.\S+ +` + regexp.QuoteMeta(s.body) +
			`  \{status=200 path="/a b"\} trace=` + s.traceID + ` span=` + s.spanID + `$`)
		if !want.MatchString(line) {
			t.Errorf("line for %q:\n%s\nwant it to match %s", s.body, line, want)
		}
	}
	for _, name := range []string{"grpc", "http", "http-gzip"} {
		// Above each provider's lines, its resource: processes of one
		// service told apart.
		res := ""
		for l := range strings.SplitSeq(p.stdout(), "\n") {
			if strings.HasPrefix(l, "resource {") {
				res = l
			}
			if strings.Contains(l, "handled over "+name+" ") && !strings.Contains(res, " transport="+name+"}") {
				t.Errorf("line %q under %q, want its resource, with transport=%s", l, res, name)
			}
		}
		line := p.waitLine(t, "no span over "+name)
		if !strings.Contains(line, " WARN  svc."+name) || !strings.HasSuffix(line, "{ratio=0.1}") || strings.Contains(line, "trace=") {
			t.Errorf("line of a record without a span: %s", line)
		}
	}

	// SIGINT: the summary, grouped by trace, and status 0.
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := p.wait(10 * time.Second); err != nil {
		t.Fatalf("after SIGINT: %v\nstderr:\n%s", err, p.stderr())
	}
	out := p.stdout()
	_, summary, ok := strings.Cut(out, "=== the backend received ")
	if !ok {
		t.Fatalf("no summary after SIGINT:\n%s", out)
	}
	if !strings.HasPrefix(summary, "3 spans and 6 log records, grouped by trace ===") {
		t.Errorf("summary header: %q", summary[:min(len(summary), 80)])
	}
	for _, s := range all {
		re := regexp.MustCompile(`\ntrace ` + s.traceID + `\n  span request \S+  ` + s.spanID + `  [^\n]*\n    INFO  svc\.\S+ +` + regexp.QuoteMeta(s.body) + `  \{status=200 path=/a b\}\n`)
		if !re.MatchString(summary) {
			t.Errorf("summary lacks trace %s with span and %q under it:\n%s", s.traceID, s.body, summary)
		}
	}
	if _, untraced, ok := strings.Cut(summary, "\nno trace\n"); !ok || strings.Count(untraced, "WARN  svc.") != 3 {
		t.Errorf("summary lacks the 3 records without a trace under \"no trace\":\n%s", summary)
	}
	t.Logf("took %v", time.Since(start).Round(time.Millisecond))
	if testing.Verbose() {
		t.Logf("stdout:\n%s\nstderr:\n%s", out, p.stderr())
	}
}

// TestFlags: bad flags are refused with status 2, a busy port with 1.
func TestFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want int
		say  string
	}{
		{[]string{"-grpc", "", "-http", ""}, 2, "nothing to listen on"},
		{[]string{"-keep", "-1"}, 2, "-keep"},
		{[]string{"extra"}, 2, "unexpected argument"},
		{[]string{"-nope"}, 2, "flag provided but not defined"},
	} {
		var stdout, stderr strings.Builder
		if got := run(c.args, &stdout, &stderr); got != c.want || !strings.Contains(stderr.String(), c.say) {
			t.Errorf("%q: status %d, stderr %q; want %d and %q", c.args, got, stderr.String(), c.want, c.say)
		}
	}

	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	var stdout, stderr strings.Builder
	if got := run([]string{"-grpc", busy.Addr().String(), "-http", ""}, &stdout, &stderr); got != 1 || !strings.Contains(stderr.String(), "another receiver running") {
		t.Errorf("busy port: status %d, stderr %q", got, stderr.String())
	}
}

// build builds the command into a temporary directory.
func build(t *testing.T) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build with")
	}
	bin := filepath.Join(t.TempDir(), "zaplens-receive")
	cmd := exec.Command(gobin, "build", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// proc is a running receiver whose output is read as it comes.
type proc struct {
	cmd   *exec.Cmd
	done  chan error // the process's end, once its output is read
	ended bool       // done was received by wait

	mu       sync.Mutex
	out, err strings.Builder
	changed  chan struct{} // closed and replaced when out grows
}

// startReceiver runs bin with args and waits until it says it listens.
func startReceiver(t *testing.T, bin string, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(bin, args...), done: make(chan error, 1), changed: make(chan struct{})}
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !p.ended {
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	ready := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			p.mu.Lock()
			p.err.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
			if strings.Contains(sc.Text(), "Ctrl-C prints the summary") {
				close(ready)
			}
		}
	})
	wg.Go(func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			p.mu.Lock()
			p.out.WriteString(sc.Text() + "\n")
			close(p.changed)
			p.changed = make(chan struct{})
			p.mu.Unlock()
		}
	})
	go func() { wg.Wait(); p.done <- p.cmd.Wait() }()
	select {
	case <-ready:
	case err := <-p.done:
		p.done <- err
		t.Fatalf("receiver ended before listening: %v\nstderr:\n%s", err, p.stderr())
	case <-time.After(5 * time.Second):
		t.Fatalf("receiver did not say it listens within 5s; stderr:\n%s", p.stderr())
	}
	return p
}

// waitLine returns the first stdout line holding s, waiting up to 5s.
func (p *proc) waitLine(t *testing.T, s string) string {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		p.mu.Lock()
		out, changed := p.out.String(), p.changed
		p.mu.Unlock()
		for line := range strings.SplitSeq(out, "\n") {
			if strings.Contains(line, s) {
				return line
			}
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("no line with %q on stdout within 5s:\n%s\nstderr:\n%s", s, out, p.stderr())
		}
	}
}

// wait waits for the process to end: nil when it exits 0.
func (p *proc) wait(d time.Duration) error {
	p.ended = true
	select {
	case err := <-p.done:
		return err
	case <-time.After(d):
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
		return errors.Join(errors.New("still running"), <-p.done)
	}
}

func (p *proc) stdout() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

func (p *proc) stderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err.String()
}
