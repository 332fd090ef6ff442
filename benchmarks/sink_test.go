package benchmarks

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The pipelines of the benchmarks export over OTLP/gRPC to cmd/otlpsink, the
// Collector's own otlpreceiver with a counting consumer, running in a
// process of its own so that the benchmark's getrusage counts the logging
// program and its exporter, not the receiver. The sink is built with
// `go build` once per test process into a temporary directory, unless
// ZAPLENS_BENCH_SINK names a binary already built (run.sh does that).
const sinkEnv = "ZAPLENS_BENCH_SINK"

// sinkProfileEnv, when set, names a file for the sink's own CPU profile
// (otlpsink -cpuprofile); each sink started overwrites it.
const sinkProfileEnv = "ZAPLENS_BENCH_SINK_CPUPROFILE"

var sinkBuild struct {
	once sync.Once
	dir  string // the temporary directory, removed by TestMain
	path string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if sinkBuild.dir != "" {
		os.RemoveAll(sinkBuild.dir)
	}
	os.Exit(code)
}

// sinkBinary is the path of an otlpsink binary, built on first use.
func sinkBinary(tb testing.TB) string {
	tb.Helper()
	if p := os.Getenv(sinkEnv); p != "" {
		return p
	}
	sinkBuild.once.Do(func() {
		dir, err := os.MkdirTemp("", "zaplens-otlpsink-")
		if err != nil {
			sinkBuild.err = err
			return
		}
		sinkBuild.dir = dir
		sinkBuild.path = filepath.Join(dir, "otlpsink")
		cmd := exec.Command("go", "build", "-o", sinkBuild.path, "./cmd/otlpsink")
		cmd.Dir = packageDir()
		if out, err := cmd.CombinedOutput(); err != nil {
			sinkBuild.err = fmt.Errorf("go build ./cmd/otlpsink: %v\n%s", err, out)
		}
	})
	if sinkBuild.err != nil {
		tb.Fatal(sinkBuild.err)
	}
	return sinkBuild.path
}

// packageDir is this package's source directory: where go test runs, or,
// for a test binary run from elsewhere, where this file was compiled.
func packageDir() string {
	if _, err := os.Stat("cmd/otlpsink"); err == nil {
		return "."
	}
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "."
	}
	return filepath.Dir(file)
}

// A sink is a running otlpsink child process.
type sink struct {
	GRPC     string // host:port of its OTLP/gRPC endpoint
	OTLPHTTP string // host:port of its OTLP/HTTP endpoint
	HTTP     string // host:port of /count
	cmd      *exec.Cmd
	in       io.WriteCloser
	errs     bytes.Buffer
}

// sinkTotals mirrors otlpsink's /count answer.
type sinkTotals struct {
	Records  int64 `json:"records"`
	Requests int64 `json:"requests"`
	// Duplicates is the records whose timestamp the sink had seen before:
	// sent twice, since each benchmark logs from one goroutine.
	Duplicates int64 `json:"duplicates"`
	// CPUNanos is the sink process's own CPU time so far.
	CPUNanos int64 `json:"cpu_ns"`
}

// Unique is the records received once or more, each counted once.
func (t sinkTotals) Unique() int64 { return t.Records - t.Duplicates }

// startSink starts a fresh receiver on free loopback ports; it is stopped
// when tb ends.
func startSink(tb testing.TB) *sink {
	tb.Helper()
	s := &sink{}
	args := []string{"-stdin"}
	if p := os.Getenv(sinkProfileEnv); p != "" {
		args = append(args, "-cpuprofile", p)
	}
	s.cmd = exec.Command(sinkBinary(tb), args...)
	s.cmd.Stderr = &s.errs
	var err error
	if s.in, err = s.cmd.StdinPipe(); err != nil {
		tb.Fatal(err)
	}
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.stop)
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		tb.Fatalf("otlpsink did not start: %v: %s", err, s.errs.String())
	}
	for _, f := range strings.Fields(line) {
		k, v, _ := strings.Cut(f, "=")
		switch k {
		case "grpc":
			s.GRPC = v
		case "otlphttp":
			s.OTLPHTTP = v
		case "http":
			s.HTTP = v
		}
	}
	if s.GRPC == "" || s.OTLPHTTP == "" || s.HTTP == "" {
		tb.Fatalf("otlpsink: unexpected first line %q", line)
	}
	return s
}

var sinkClient = &http.Client{Timeout: 10 * time.Second}

// Count is what the receiver has acknowledged so far. An exporter counts a
// request as delivered only once the receiver has answered it, after
// counting it, so after a pipeline's Shutdown this is final.
func (s *sink) Count(tb testing.TB) sinkTotals {
	tb.Helper()
	resp, err := sinkClient.Get("http://" + s.HTTP + "/count")
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	var t sinkTotals
	if err := json.NewDecoder(resp.Body).Decode(&t); err != nil {
		tb.Fatal(err)
	}
	return t
}

// pause stops the receiver's process (SIGSTOP) until resume: it takes no
// CPU, and what is sent to it waits in the sockets and the sender's queue.
func (s *sink) pause(tb testing.TB) {
	if err := s.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		tb.Fatal(err)
	}
}

// resume continues a paused receiver (SIGCONT).
func (s *sink) resume(tb testing.TB) {
	if err := s.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		tb.Fatal(err)
	}
}

func (s *sink) stop() {
	// A benchmark that failed while the receiver was paused leaves it
	// stopped, deaf to SIGTERM and to its stdin closing.
	s.cmd.Process.Signal(syscall.SIGCONT)
	s.cmd.Process.Signal(syscall.SIGTERM)
	s.in.Close()
	s.cmd.Wait()
}

// TestSinkStopsWhenPaused: a benchmark that fails while the receiver is
// paused must not leave its cleanup waiting for ever on a stopped process.
func TestSinkStopsWhenPaused(t *testing.T) {
	s := startSink(t)
	s.pause(t)
	stopped := make(chan struct{})
	go func() {
		s.stop()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		t.Fatal("a paused sink did not stop within 10 s")
	}
}
