// Command zaplens-receive is an OTLP receiver to point a program at while
// developing: it prints each log record on one line as it arrives and, when
// stopped, everything it received grouped by trace, each span with its log
// lines under it.
//
//	go run github.com/zaplens/zaplens/cmd/zaplens-receive [-grpc ADDR] [-http ADDR] [-keep N]
//
// It takes OTLP/gRPC on -grpc (default 127.0.0.1:4317) and OTLP/HTTP with
// protobuf bodies, gzip-compressed or not, at /v1/logs and /v1/traces on
// -http (default 127.0.0.1:4318); an empty address turns that side off.
// It listens on loopback unless told otherwise, without TLS or
// authentication. Point zaplens at it with
// OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4317, or
// http://127.0.0.1:4318 with OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf.
//
// Records go to stdout, one line each: time (UTC), severity, scope, body,
// attributes, trace and span id.
//
//	2026-01-02T15:04:05.123456Z INFO  trainer.optim      step done  {step=1 loss=1.9173} trace=4bf92f3577b34da6a3ce929d0e0e4736 span=00f067aa0ba902b7
//
// On SIGINT (Ctrl-C) or SIGTERM it answers the requests in flight, prints
// the summary grouped by trace on stdout and exits 0; a second signal ends
// it at once. It keeps the last -keep log records and spans (default
// 100000) for the summary; 0 keeps all.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/zaplens/zaplens/internal/otlpview"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run runs the command and returns its exit status.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("zaplens-receive", flag.ContinueOnError)
	fs.SetOutput(stderr)
	grpcAddr := fs.String("grpc", "127.0.0.1:4317", "OTLP/gRPC `address`; empty: no gRPC")
	httpAddr := fs.String("http", "127.0.0.1:4318", "OTLP/HTTP `address` (/v1/logs, /v1/traces); empty: no HTTP")
	keep := fs.Int("keep", 100000, "log records and spans kept for the summary, the latest; 0: all")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: zaplens-receive [-grpc ADDR] [-http ADDR] [-keep N]\n\n"+
			"Receives OTLP logs and traces, prints each log record as it arrives,\n"+
			"and on Ctrl-C or SIGTERM everything grouped by trace.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "zaplens-receive: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return 2
	}
	if *grpcAddr == "" && *httpAddr == "" {
		fmt.Fprintln(stderr, "zaplens-receive: -grpc and -http are both empty: nothing to listen on")
		return 2
	}
	if *keep < 0 {
		fmt.Fprintln(stderr, "zaplens-receive: -keep must be 0 or more")
		return 2
	}

	// Signals are caught before listening: a signal once the address is
	// printed always gets the summary.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	lastResource := ""
	r := &otlpview.Receiver{
		Keep: *keep,
		OnLog: func(l otlpview.Log) {
			// The resource above the lines it sent, when it changes: the
			// ranks of a job share a service.name, not a resource.
			if res := l.ResourceLine(); res != lastResource {
				fmt.Fprintln(stdout, res)
				lastResource = res
			}
			fmt.Fprintln(stdout, l.Line())
		},
	}
	srv, err := otlpview.Listen(r, *grpcAddr, *httpAddr)
	if err != nil {
		fmt.Fprintf(stderr, "zaplens-receive: %v\n", err)
		if errors.Is(err, syscall.EADDRINUSE) {
			fmt.Fprintln(stderr, "zaplens-receive: is a collector or another receiver running? Choose other ports with -grpc and -http.")
		}
		return 1
	}
	var on []string
	if a := srv.GRPCAddr(); a != "" {
		on = append(on, "OTLP/gRPC on "+a)
		warnOpen(stderr, a)
	}
	if a := srv.HTTPAddr(); a != "" {
		on = append(on, "OTLP/HTTP on http://"+a+"/v1/logs")
		warnOpen(stderr, a)
	}
	fmt.Fprintf(stderr, "zaplens-receive: %s; Ctrl-C prints the summary\n", strings.Join(on, ", "))

	status := 0
	select {
	case <-ctx.Done():
	case err := <-srv.Err():
		fmt.Fprintf(stderr, "zaplens-receive: %v\n", err)
		status = 1
	}
	stop() // a second signal ends the process at once

	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	srv.Shutdown(sctx)
	fmt.Fprintln(stdout)
	r.Report(stdout)
	return status
}

// warnOpen warns when addr is reachable from other machines: the receiver
// has no TLS and no authentication.
func warnOpen(stderr io.Writer, addr string) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() || host == "localhost" {
		return
	}
	fmt.Fprintf(stderr, "zaplens-receive: warning: %s is reachable beyond this machine, without TLS or authentication\n", addr)
}
