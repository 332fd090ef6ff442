package main

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"go.uber.org/zap"
	"google.golang.org/grpc"

	"github.com/zaplens/zaplens"
	"github.com/zaplens/zaplens/internal/otlpview"
	"github.com/zaplens/zaplens/otlplog"
)

// The test binary is also the command and the program whose spool it
// sends: TestMain runs one or the other in a child, as the environment
// says.
func TestMain(m *testing.M) {
	switch os.Getenv("ZAPLENS_SHIP_TEST") {
	case "command":
		os.Exit(run(os.Args[1:]))
	case "writer":
		writer()
	}
	os.Exit(m.Run())
}

// writer logs lines through a provider with a spool, says so, and waits to
// be killed.
func writer() {
	p, err := otlplog.NewLoggerProvider(context.Background())
	if err != nil {
		panic(err)
	}
	logger := zap.New(zaplens.NewCore(zaplens.WithLoggerProvider(p)))
	n, _ := strconv.Atoi(os.Getenv("LINES"))
	for i := range n {
		logger.Info("line " + strconv.Itoa(i))
	}
	os.Stdout.WriteString("logged\n")
	select {}
}

// serve starts a receiver on addr.
func serve(t *testing.T, addr string) *otlpview.Receiver {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	r := &otlpview.Receiver{}
	srv := grpc.NewServer()
	r.RegisterGRPC(srv)
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	return r
}

func environ(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OTEL_") && !strings.HasPrefix(kv, "ZAPLENS_") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// zaplens-ship on a directory left by a killed program: with the collector
// down it leaves everything and exits 1; with it up it sends every line,
// with the program's own service name, and exits 0.
func TestShipKilledWritersSpool(t *testing.T) {
	dir := t.TempDir()
	lis, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := lis.Addr().String()
	lis.Close()
	const n = 4000

	w := exec.Command(os.Args[0])
	w.Env = environ("ZAPLENS_SHIP_TEST=writer", "ZAPLENS_SPOOL_DIR="+dir, "LINES="+strconv.Itoa(n),
		"OTEL_SERVICE_NAME=trainer", "OTEL_EXPORTER_OTLP_ENDPOINT=http://"+addr)
	out, _ := w.StdoutPipe()
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 7)
	if _, err := out.Read(buf); err != nil || string(buf) != "logged\n" {
		t.Fatalf("writer: %q %v", buf, err)
	}
	w.Process.Kill()
	w.Wait()

	ship := func(env ...string) (string, int) {
		cmd := exec.Command(os.Args[0], "-timeout", "20s", dir)
		cmd.Env = environ(append(env, "ZAPLENS_SHIP_TEST=command", "OTEL_EXPORTER_OTLP_ENDPOINT=http://"+addr)...)
		b, err := cmd.CombinedOutput()
		code := 0
		if e, ok := err.(*exec.ExitError); ok {
			code = e.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(b), code
	}
	got, code := ship("OTEL_EXPORTER_OTLP_TIMEOUT=300", "ZAPLENS_RETRY_MAX_ELAPSED=300") // a down collector fails fast
	if code != 1 || !strings.Contains(got, strconv.Itoa(n)+" left in the spool") {
		t.Errorf("collector down: exit %d, output:\n%s", code, got)
	}
	c := serve(t, addr)
	got, code = ship()
	if code != 0 || !strings.Contains(got, strconv.Itoa(n)+" delivered") {
		t.Errorf("collector up: exit %d, output:\n%s", code, got)
	}
	logs := c.Logs()
	if len(logs) != n || logs[0].Service != "trainer" || logs[n-1].Service != "trainer" {
		t.Errorf("collector got %d records, want %d of trainer", len(logs), n)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*")); len(m) != 0 {
		t.Errorf("left in the directory: %v", m)
	}
	t.Logf("output:\n%s", got)
}

// zaplens-ship reads OTEL_CONFIG_FILE as the programs whose spool it sends
// do: it links the file's parser, and a file it cannot run is told with the
// setting's path.
func TestReadsConfigFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "otel.yaml")
	yaml := "file_format: \"1.0\"\nlogger_provider: {processors: [{simple: {exporter: {console: }}}]}\n"
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], t.TempDir())
	cmd.Env = environ("ZAPLENS_SHIP_TEST=command", "OTEL_CONFIG_FILE="+file)
	out, err := cmd.CombinedOutput()
	if e, ok := err.(*exec.ExitError); !ok || e.ExitCode() != 1 || !strings.Contains(string(out), "logger_provider.processors[0].simple: not supported") {
		t.Errorf("exit %v, output:\n%s", err, out)
	}
}

// Bad usage exits 2.
func TestUsage(t *testing.T) {
	if code := run(nil); code != 2 {
		t.Errorf("no directory: exit %d", code)
	}
}
