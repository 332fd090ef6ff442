package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	collogs "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
)

// marker precedes, in the README and docs, a Go block that is this file.
const marker = "<!-- compiled: example/service/main.go -->"

// The README's service block is this program, from "package main" on, so
// that it compiles and keeps its TracerProvider: a block that drifts fails
// here. Every page under docs/ that shows it is held to the same.
func TestDocsShowThisProgram(t *testing.T) {
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	program := string(src[bytes.Index(src, []byte("\npackage main"))+1:])
	pages, _ := filepath.Glob("../../docs/*.md")
	pages = append(pages, "../../README.md")
	found := 0
	for _, page := range pages {
		text, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, block := range markedBlocks(string(text)) {
			found++
			if block != program {
				t.Errorf("%s: the block after %s is not example/service/main.go from \"package main\" on; copy it again", page, marker)
			}
		}
	}
	if found == 0 {
		t.Fatalf("no block marked %s in README.md", marker)
	}
	for _, must := range []string{"sdktrace.NewTracerProvider", "otel.SetTracerProvider", "otelhttp.NewHandler", "provider.Shutdown", "tp.Shutdown"} {
		if !strings.Contains(program, must) {
			t.Errorf("the service has no %s", must)
		}
	}
}

// markedBlocks returns the text of each ```go block right after the marker.
func markedBlocks(text string) []string {
	var blocks []string
	for {
		i := strings.Index(text, marker)
		if i < 0 {
			return blocks
		}
		text = strings.TrimLeft(text[i+len(marker):], "\n")
		if !strings.HasPrefix(text, "```go\n") {
			blocks = append(blocks, "")
			continue
		}
		text = text[len("```go\n"):]
		end := strings.Index(text, "```\n")
		if end < 0 {
			end = len(text)
		}
		blocks = append(blocks, text[:end])
		text = text[end:]
	}
}

// collector is an OTLP/gRPC receiver of logs and traces.
type collector struct {
	collogs.UnimplementedLogsServiceServer
	coltrace.UnimplementedTraceServiceServer
	mu         sync.Mutex
	logTraces  []string // the trace id of each log record
	logLevels  []string // the severity text of each log record
	spanTraces []string // the trace id of each span
}

func (c *collector) Export(_ context.Context, req *collogs.ExportLogsServiceRequest) (*collogs.ExportLogsServiceResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rl := range req.ResourceLogs {
		for _, sl := range rl.ScopeLogs {
			for _, r := range sl.LogRecords {
				c.logTraces = append(c.logTraces, hex.EncodeToString(r.TraceId))
				c.logLevels = append(c.logLevels, r.SeverityText)
			}
		}
	}
	return &collogs.ExportLogsServiceResponse{}, nil
}

type traceService struct{ *collector }

func (c traceService) Export(_ context.Context, req *coltrace.ExportTraceServiceRequest) (*coltrace.ExportTraceServiceResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				c.spanTraces = append(c.spanTraces, hex.EncodeToString(s.TraceId))
			}
		}
	}
	return &coltrace.ExportTraceServiceResponse{}, nil
}

// build builds the service once for the tests.
func build(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "service")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
}

// A run is the service started against an endpoint, its stderr read as
// it comes, each line with the time it came.
type run struct {
	port  string
	cmd   *exec.Cmd
	mu    sync.Mutex
	lines []string
	at    []time.Time
	done  chan struct{} // stderr closed
}

func (r *run) stderr() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.lines, "\n")
}

// first returns when the first line holding s came, or the zero time.
func (r *run) first(s string) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, l := range r.lines {
		if strings.Contains(l, s) {
			return r.at[i]
		}
	}
	return time.Time{}
}

// start runs the service against endpoint and serves it one request.
func start(t *testing.T, bin, endpoint string) *run {
	t.Helper()
	port := freePort(t)
	r := &run{port: port, cmd: exec.Command(bin), done: make(chan struct{})}
	r.cmd.Env = append(os.Environ(), "PORT="+port, "OTEL_EXPORTER_OTLP_ENDPOINT="+endpoint)
	pipe, err := r.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.cmd.Process.Kill() })
	go func() {
		defer close(r.done)
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			r.mu.Lock()
			r.lines = append(r.lines, sc.Text())
			r.at = append(r.at, time.Now())
			r.mu.Unlock()
		}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get("http://127.0.0.1:" + port + "/hello")
		if err == nil {
			resp.Body.Close()
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("the service did not answer: %v\n%s", err, r.stderr())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop sends SIGTERM and returns when it was sent and how long the
// service took to exit.
func (r *run) stop(t *testing.T) (time.Time, time.Duration) {
	t.Helper()
	begin := time.Now()
	if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-r.done
	_ = r.cmd.Wait()
	return begin, time.Since(begin)
}

// A new user's first run: the line of a request reaches the collector with
// the trace id of that request's span, which reaches it too. A request
// that fails brings its held Debug line, with its trace id; the one that
// succeeded brings its Info line only.
func TestServiceShipsCorrelatedLines(t *testing.T) {
	bin := build(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &collector{}
	s := grpc.NewServer()
	collogs.RegisterLogsServiceServer(s, c)
	coltrace.RegisterTraceServiceServer(s, traceService{c})
	go s.Serve(l)
	defer s.Stop()

	r := start(t, bin, "http://"+l.Addr().String())
	resp, err := http.Get("http://127.0.0.1:" + r.port + "/hello?fail")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusInternalServerError {
		t.Errorf("/hello?fail answered %s", resp.Status)
	}
	if _, d := r.stop(t); d > 2*time.Second {
		t.Errorf("stopped in %v with the collector answering", d)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.logTraces) != 2 || len(c.spanTraces) != 2 {
		t.Fatalf("got %d log records and %d spans, want 2 and 2; stderr:\n%s", len(c.logTraces), len(c.spanTraces), r.stderr())
	}
	// Each request's span has one line: the good one's Info, the failed
	// one's Debug.
	levels := map[string]string{}
	for i, id := range c.logTraces {
		levels[id] += c.logLevels[i]
	}
	good, failed := c.spanTraces[0], c.spanTraces[1]
	if levels[good] != "info" {
		good, failed = failed, good
	}
	if levels[good] != "info" || levels[failed] != "debug" {
		t.Errorf("log records %q in traces %q; spans in traces %q: want one info and one debug line, each in its own span's trace", c.logLevels, c.logTraces, c.spanTraces)
	}
	if !strings.Contains(r.stderr(), `"trace_id":"`+good+`"`) {
		t.Errorf("the printed line has no trace_id %s:\n%s", good, r.stderr())
	}
}

// How long the README's stop takes, from SIGTERM to exit, and when the
// logs were settled (the loss line that provider.Shutdown's end writes):
//
//	cd example/service && go test -run TestStopTimes -v .
//
// Nothing listening: the log pipeline is done at once, but the trace
// exporter retries until the 8 s deadline. A collector that takes
// connections and never answers: Sync waits its 5 s bound, Shutdown the
// rest of the deadline, and the spans get none of it.
func TestStopTimes(t *testing.T) {
	if testing.Short() {
		t.Skip("takes 16 s")
	}
	bin := build(t)
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() { // accept, read nothing, answer nothing
		var held []net.Conn
		for {
			conn, err := silent.Accept()
			if err != nil {
				for _, c := range held {
					c.Close()
				}
				return
			}
			held = append(held, conn)
		}
	}()
	for _, tc := range []struct {
		name             string
		endpoint         string
		logsMin, logsMax time.Duration
	}{
		{"refused", "http://127.0.0.1:" + freePort(t), 0, time.Second},
		{"never answers", "http://" + silent.Addr().String(), 7900 * time.Millisecond, 8100 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := start(t, bin, tc.endpoint)
			time.Sleep(100 * time.Millisecond) // the request's span has ended
			begin, d := r.stop(t)
			settled := r.first("1 of 1 log record was not delivered")
			if settled.IsZero() {
				t.Fatalf("no word of the lost line on stderr:\n%s", r.stderr())
			}
			logs := settled.Sub(begin)
			t.Logf("collector %s: logs settled %.3f s after SIGTERM, exit at %.3f s", tc.name, logs.Seconds(), d.Seconds())
			if logs < tc.logsMin || logs > tc.logsMax {
				t.Errorf("logs settled after %v, want %v to %v; stderr:\n%s", logs, tc.logsMin, tc.logsMax, r.stderr())
			}
			if d < 7900*time.Millisecond || d > 8500*time.Millisecond {
				t.Errorf("exited after %v, want the 8 s deadline; stderr:\n%s", d, r.stderr())
			}
		})
	}
}
