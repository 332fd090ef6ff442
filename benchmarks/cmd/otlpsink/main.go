// Command otlpsink is the OTLP receiver of the benchmarks: a logs endpoint
// over OTLP/gRPC (and OTLP/HTTP with protobuf) that decodes every request
// in full into an ExportLogsServiceRequest, as a collector's receiver does,
// counts its records, and acknowledges it. It runs in a process of its own
// so that the CPU it spends receiving is not charged to the program that
// logs.
//
// It prints one line when it is listening,
//
//	grpc=127.0.0.1:PORT http=127.0.0.1:PORT
//
// and answers GET http://ADDR/count with the totals so far as JSON:
//
//	{"records":100000,"requests":98,"bytes":14123456,"refused":0,"duplicates":0}
//
// Duplicates are records whose timestamp (time_unix_nano) it has seen
// before: a record sent twice, when, as in the benchmarks, one goroutine
// logs every line and no two lines share a nanosecond. -dedup=false turns
// that bookkeeping off.
//
// OTLP/HTTP requests go to http://ADDR/v1/logs on the same port. It exits
// on SIGTERM or SIGINT, printing the totals on stderr, and with -stdin when
// its standard input closes (so that a benchmark that dies does not leave
// it behind).
//
//	otlpsink [-grpc 127.0.0.1:0] [-http 127.0.0.1:0] [-max-recv-mib 4] [-dedup=true] [-stdin]
package main

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	"google.golang.org/grpc"
	_ "google.golang.org/grpc/encoding/gzip" // gzip-compressed gRPC requests
	"google.golang.org/protobuf/proto"
)

// Totals are what the sink has acknowledged so far.
type Totals struct {
	Records  int64 `json:"records"`  // log records in the acknowledged requests
	Requests int64 `json:"requests"` // acknowledged requests
	Bytes    int64 `json:"bytes"`    // their encoded size (uncompressed)
	Refused  int64 `json:"refused"`  // requests that failed to decode
	// Duplicates is the records whose timestamp was seen before.
	Duplicates int64 `json:"duplicates"`
	// CPUNanos is the sink's own CPU time so far, user and system: what
	// decoding the requests costs the machine beside the logging process.
	CPUNanos int64 `json:"cpu_ns"`
}

type sink struct {
	collogspb.UnimplementedLogsServiceServer
	records, requests, bytes, refused, duplicates atomic.Int64

	dedup bool
	mu    sync.Mutex
	seen  map[uint64]struct{}
}

// Export is the OTLP/gRPC service: grpc-go's codec has already decoded the
// request with proto.Unmarshal into the generated type.
func (s *sink) Export(_ context.Context, req *collogspb.ExportLogsServiceRequest) (*collogspb.ExportLogsServiceResponse, error) {
	s.count(req)
	return &collogspb.ExportLogsServiceResponse{}, nil
}

// count walks every record, as a receiver handing them on would, and adds
// the request to the totals.
func (s *sink) count(req *collogspb.ExportLogsServiceRequest) {
	var n, dups int64
	if s.dedup {
		s.mu.Lock()
	}
	for _, rl := range req.GetResourceLogs() {
		for _, sl := range rl.GetScopeLogs() {
			n += int64(len(sl.GetLogRecords()))
			if !s.dedup {
				continue
			}
			for _, r := range sl.GetLogRecords() {
				if _, ok := s.seen[r.GetTimeUnixNano()]; ok {
					dups++
				} else {
					s.seen[r.GetTimeUnixNano()] = struct{}{}
				}
			}
		}
	}
	if s.dedup {
		s.mu.Unlock()
	}
	s.duplicates.Add(dups)
	s.bytes.Add(int64(proto.Size(req)))
	s.records.Add(n)
	s.requests.Add(1)
}

// serveHTTP answers /count, and OTLP/HTTP with protobuf on /v1/logs.
func (s *sink) serveHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/count":
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(s.totals())
	case "/v1/logs":
		s.otlpHTTP(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (s *sink) otlpHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			s.refused.Add(1)
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		defer zr.Close()
		body = zr
	}
	data, err := io.ReadAll(body)
	if err != nil {
		s.refused.Add(1)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req := &collogspb.ExportLogsServiceRequest{}
	if err := proto.Unmarshal(data, req); err != nil {
		s.refused.Add(1)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.count(req)
	resp, _ := proto.Marshal(&collogspb.ExportLogsServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(resp)
}

// cpuNanos is this process's CPU time so far.
func cpuNanos() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

func (s *sink) totals() Totals {
	return Totals{Records: s.records.Load(), Requests: s.requests.Load(), Bytes: s.bytes.Load(),
		Refused: s.refused.Load(), Duplicates: s.duplicates.Load(), CPUNanos: cpuNanos()}
}

func main() {
	grpcAddr := flag.String("grpc", "127.0.0.1:0", "OTLP/gRPC listen address")
	httpAddr := flag.String("http", "127.0.0.1:0", "OTLP/HTTP and /count listen address")
	maxRecv := flag.Int("max-recv-mib", 4, "largest gRPC request accepted, MiB (a Collector's default: 4)")
	dedup := flag.Bool("dedup", true, "count records whose timestamp was seen before as duplicates")
	stdin := flag.Bool("stdin", false, "exit when standard input closes")
	flag.Parse()

	s := &sink{dedup: *dedup, seen: map[uint64]struct{}{}}
	gl, err := net.Listen("tcp", *grpcAddr)
	if err != nil {
		fail(err)
	}
	hl, err := net.Listen("tcp", *httpAddr)
	if err != nil {
		fail(err)
	}
	gs := grpc.NewServer(grpc.MaxRecvMsgSize(*maxRecv << 20))
	collogspb.RegisterLogsServiceServer(gs, s)
	go gs.Serve(gl)
	hs := &http.Server{Handler: http.HandlerFunc(s.serveHTTP)}
	go hs.Serve(hl)
	fmt.Printf("grpc=%s http=%s\n", gl.Addr(), hl.Addr())

	done := make(chan os.Signal, 1)
	signal.Notify(done, syscall.SIGTERM, syscall.SIGINT)
	if *stdin {
		go func() {
			io.Copy(io.Discard, os.Stdin) // returns when the parent closes it or dies
			done <- syscall.SIGTERM
		}()
	}
	<-done
	gs.Stop()
	hs.Close()
	t := s.totals()
	fmt.Fprintf(os.Stderr, "otlpsink: %d records in %d requests, %d bytes, %d refused\n", t.Records, t.Requests, t.Bytes, t.Refused)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "otlpsink:", err)
	os.Exit(1)
}
