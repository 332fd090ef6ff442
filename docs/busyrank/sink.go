//go:build ignore

// Sink is an OTLP/gRPC logs endpoint that counts the records it receives
// and prints the total when it gets SIGTERM: the local collector of the
// busy-rank measurement in the README ("Sending logs to a collector") (see run.sh).
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	collogpb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	"google.golang.org/grpc"
)

type srv struct {
	collogpb.UnimplementedLogsServiceServer
	n, reqs atomic.Int64
}

func (s *srv) Export(_ context.Context, req *collogpb.ExportLogsServiceRequest) (*collogpb.ExportLogsServiceResponse, error) {
	s.reqs.Add(1)
	for _, rl := range req.ResourceLogs {
		for _, sl := range rl.ScopeLogs {
			s.n.Add(int64(len(sl.LogRecords)))
		}
	}
	return &collogpb.ExportLogsServiceResponse{}, nil
}

func main() {
	addr := flag.String("addr", "127.0.0.1:4317", "")
	flag.Parse()
	lis, err := net.Listen("tcp", *addr)
	if err != nil {
		panic(err)
	}
	s := &srv{}
	g := grpc.NewServer(grpc.MaxRecvMsgSize(64 << 20))
	collogpb.RegisterLogsServiceServer(g, s)
	go g.Serve(lis)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT)
	<-ch
	fmt.Printf("received %d records in %d requests\n", s.n.Load(), s.reqs.Load())
}
