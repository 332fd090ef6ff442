package benchmarks

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	"google.golang.org/grpc"
)

// The busy-rank benchmark sends OTLP/gRPC to a receiver on loopback. The
// receiver runs in a child process (this test binary again) so that the
// benchmark's getrusage counts the logging program and its exporter, not
// the receiver. It is a minimal OTLP logs service that counts the records
// it acknowledges; the Collector's own receiver is exercised by the
// integration module.
const serverEnv = "ZAPLENS_BENCH_OTLP_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(serverEnv) == "1" {
		if err := serveOTLP(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "otlp server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type countingLogsService struct {
	collogspb.UnimplementedLogsServiceServer
	records atomic.Int64
}

func (s *countingLogsService) Export(_ context.Context, req *collogspb.ExportLogsServiceRequest) (*collogspb.ExportLogsServiceResponse, error) {
	var n int
	for _, rl := range req.GetResourceLogs() {
		for _, sl := range rl.GetScopeLogs() {
			n += len(sl.GetLogRecords())
		}
	}
	s.records.Add(int64(n))
	return &collogspb.ExportLogsServiceResponse{}, nil
}

// serveOTLP listens on loopback, writes its address to out, then answers
// each "count" line read from in with the records received so far, and
// returns when in closes.
func serveOTLP(in io.Reader, out io.Writer) error {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := grpc.NewServer(grpc.MaxRecvMsgSize(64 << 20))
	svc := &countingLogsService{}
	collogspb.RegisterLogsServiceServer(srv, svc)
	go srv.Serve(lis)
	defer srv.Stop()
	fmt.Fprintln(out, lis.Addr().String())
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "count" {
			fmt.Fprintln(out, svc.records.Load())
		}
	}
	return nil
}

// otlpReceiver is the parent's handle on the child receiver.
type otlpReceiver struct {
	Addr string // host:port
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Scanner
}

func startReceiver(tb testing.TB) *otlpReceiver {
	tb.Helper()
	exe, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), serverEnv+"=1")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	r := &otlpReceiver{cmd: cmd, in: in, out: bufio.NewScanner(outPipe)}
	tb.Cleanup(r.stop)
	if !r.out.Scan() {
		tb.Fatal("otlp receiver did not start")
	}
	r.Addr = r.out.Text()
	return r
}

// Count is the number of records the receiver has acknowledged.
func (r *otlpReceiver) Count(tb testing.TB) int64 {
	tb.Helper()
	if _, err := fmt.Fprintln(r.in, "count"); err != nil {
		tb.Fatal(err)
	}
	if !r.out.Scan() {
		tb.Fatal("otlp receiver gone")
	}
	n, err := strconv.ParseInt(r.out.Text(), 10, 64)
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

func (r *otlpReceiver) stop() {
	r.in.Close()
	r.cmd.Wait()
}
