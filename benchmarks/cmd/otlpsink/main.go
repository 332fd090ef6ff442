// Command otlpsink is the OTLP receiver of the benchmarks: the Collector's
// own otlpreceiver (OTLP/gRPC and OTLP/HTTP with protobuf, every setting
// its default), with a consumer that counts the records of every request
// it decodes and acknowledges it. It runs in a process of its own so that
// the CPU it spends receiving is not charged to the program that logs.
//
// It prints one line when it is listening,
//
//	grpc=127.0.0.1:PORT otlphttp=127.0.0.1:PORT http=127.0.0.1:PORT
//
// (OTLP/HTTP requests go to http://OTLPHTTP/v1/logs) and answers GET
// http://HTTP/count with the totals so far as JSON:
//
//	{"records":100000,"requests":98,"duplicates":0,"cpu_ns":412000000}
//
// Duplicates are records whose timestamp (time_unix_nano) it has seen
// before: a record sent twice, when, as in the benchmarks, one goroutine
// logs every line and no two lines share a nanosecond. -dedup=false turns
// that bookkeeping off.
//
// It exits on SIGTERM or SIGINT, printing the totals on stderr, and with
// -stdin when its standard input closes (so that a benchmark that dies
// does not leave it behind). -cpuprofile writes the sink's own CPU
// profile, to see what receiving costs.
//
//	otlpsink [-grpc 127.0.0.1:0] [-otlphttp 127.0.0.1:0] [-http 127.0.0.1:0] [-dedup=true] [-stdin] [-cpuprofile FILE]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/receiver/receivertest"
)

// Totals are what the sink has acknowledged so far.
type Totals struct {
	Records  int64 `json:"records"`  // log records in the acknowledged requests
	Requests int64 `json:"requests"` // acknowledged requests
	// Duplicates is the records whose timestamp was seen before.
	Duplicates int64 `json:"duplicates"`
	// CPUNanos is the sink's own CPU time so far, user and system: what
	// decoding the requests costs the machine beside the logging process.
	CPUNanos int64 `json:"cpu_ns"`
}

type sink struct {
	records, requests, duplicates atomic.Int64

	dedup bool
	mu    sync.Mutex
	seen  map[uint64]struct{}
}

// consume is the receiver's next consumer: the request is already decoded
// into pdata. It walks every record, as a consumer handing them on would.
func (s *sink) consume(_ context.Context, ld plog.Logs) error {
	var n, dups int64
	if s.dedup {
		s.mu.Lock()
	}
	rls := ld.ResourceLogs()
	for i := range rls.Len() {
		sls := rls.At(i).ScopeLogs()
		for j := range sls.Len() {
			recs := sls.At(j).LogRecords()
			n += int64(recs.Len())
			if !s.dedup {
				continue
			}
			for k := range recs.Len() {
				t := uint64(recs.At(k).Timestamp())
				if _, ok := s.seen[t]; ok {
					dups++
				} else {
					s.seen[t] = struct{}{}
				}
			}
		}
	}
	if s.dedup {
		s.mu.Unlock()
	}
	s.duplicates.Add(dups)
	s.records.Add(n)
	s.requests.Add(1)
	return nil
}

// cpuNanos is this process's CPU time so far.
func cpuNanos() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

func (s *sink) totals() Totals {
	return Totals{Records: s.records.Load(), Requests: s.requests.Load(),
		Duplicates: s.duplicates.Load(), CPUNanos: cpuNanos()}
}

func (s *sink) serveCount(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/count" {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(s.totals())
}

// freeAddr turns a ":0" address into one with a free port: the Collector's
// receiver listens on the endpoint it is given and does not say which port
// it got.
func freeAddr(addr string) (string, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// startReceiver starts the Collector's otlpreceiver with its default
// configuration on the two addresses, retrying briefly should a free port
// be taken between freeAddr and the receiver's listen.
func startReceiver(grpcAddr, httpAddr string, next consumer.Logs) (receiver.Logs, string, string, error) {
	var err error
	for range 20 {
		var g, h string
		if g, err = freeAddr(grpcAddr); err != nil {
			return nil, "", "", err
		}
		if h, err = freeAddr(httpAddr); err != nil {
			return nil, "", "", err
		}
		f := otlpreceiver.NewFactory()
		cfg := f.CreateDefaultConfig().(*otlpreceiver.Config)
		cfg.Protocols.GRPC.GetOrInsertDefault().NetAddr.Endpoint = g
		cfg.Protocols.HTTP.GetOrInsertDefault().ServerConfig.NetAddr.Endpoint = h
		var rcv receiver.Logs
		rcv, err = f.CreateLogs(context.Background(), receivertest.NewNopSettings(f.Type()), cfg, next)
		if err != nil {
			return nil, "", "", err
		}
		if err = rcv.Start(context.Background(), host{}); err == nil {
			return rcv, g, h, nil
		}
		_ = rcv.Shutdown(context.Background())
		time.Sleep(10 * time.Millisecond)
	}
	return nil, "", "", err
}

// host is the receiver's component.Host: no extensions.
type host struct{}

func (host) GetExtensions() map[component.ID]component.Component { return nil }

func main() {
	grpcAddr := flag.String("grpc", "127.0.0.1:0", "OTLP/gRPC listen address")
	otlpHTTPAddr := flag.String("otlphttp", "127.0.0.1:0", "OTLP/HTTP listen address")
	httpAddr := flag.String("http", "127.0.0.1:0", "/count listen address")
	dedup := flag.Bool("dedup", true, "count records whose timestamp was seen before as duplicates")
	stdin := flag.Bool("stdin", false, "exit when standard input closes")
	cpuProfile := flag.String("cpuprofile", "", "write the sink's CPU profile to this file")
	flag.Parse()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fail(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fail(err)
		}
		defer f.Close()
		defer pprof.StopCPUProfile()
	}

	s := &sink{dedup: *dedup, seen: make(map[uint64]struct{}, 1<<18)}
	next, err := consumer.NewLogs(s.consume)
	if err != nil {
		fail(err)
	}
	rcv, g, h, err := startReceiver(*grpcAddr, *otlpHTTPAddr, next)
	if err != nil {
		fail(err)
	}
	cl, err := net.Listen("tcp", *httpAddr)
	if err != nil {
		fail(err)
	}
	cs := &http.Server{Handler: http.HandlerFunc(s.serveCount)}
	go cs.Serve(cl)
	fmt.Printf("grpc=%s otlphttp=%s http=%s\n", g, h, cl.Addr())

	done := make(chan os.Signal, 1)
	signal.Notify(done, syscall.SIGTERM, syscall.SIGINT)
	if *stdin {
		go func() {
			io.Copy(io.Discard, os.Stdin) // returns when the parent closes it or dies
			done <- syscall.SIGTERM
		}()
	}
	<-done
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = rcv.Shutdown(ctx)
	cs.Close()
	t := s.totals()
	fmt.Fprintf(os.Stderr, "otlpsink: %d records in %d requests\n", t.Records, t.Requests)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "otlpsink:", err)
	os.Exit(1)
}
