// Command zaplens-ship sends what a zaplens spool directory holds: the
// records that processes logging with otlplog.WithSpool (or
// ZAPLENS_SPOOL_DIR) had not delivered when they ended, killed or not. It
// is for a job's epilogue, when no new process will start on the
// directory to send them.
//
//	go run github.com/zaplens/zaplens/cmd/zaplens-ship [-timeout 1m] DIR
//
// It is configured as the programs are, by OTEL_CONFIG_FILE or the OTEL_*
// variables (endpoint, protocol, headers, TLS, timeout), and sends each
// record with the resource and timestamps it was logged with. Files a
// live process holds are left alone, so it may run beside a job. It prints a summary and
// exits 0 when nothing is left to send, 1 when records are left in the
// directory (the collector could not be reached: run it again) or a file
// could not be read (one of a newer zaplens's format: ship it with that
// version), 2 on bad usage.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/zaplens/zaplens/otlplog"
	// OTEL_CONFIG_FILE, read as the programs whose spool this sends read it.
	_ "github.com/zaplens/zaplens/otlplog/configfile"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	fs := flag.NewFlagSet("zaplens-ship", flag.ContinueOnError)
	timeout := fs.Duration("timeout", 0, "give up after this long, leaving what is not sent (0: no limit)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: zaplens-ship [-timeout d] DIR\n\nSends the log records that ended processes left unsent in a zaplens spool directory,\nto the collector the OTEL_EXPORTER_OTLP_* variables name.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return 2
	}
	dir := fs.Arg(0)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *timeout)
		defer cancel()
	}
	start := time.Now()
	st, err := otlplog.ShipSpool(ctx, dir)
	fmt.Printf("zaplens-ship: %s: %s (%v)\n", dir, st, time.Since(start).Round(time.Millisecond))
	if err != nil {
		fmt.Fprintln(os.Stderr, err) // it says "zaplens: ship DIR: ..." already
		return 1
	}
	return 0
}
