package main

// The -victorialogs mode: the same training run, its logs sent over
// OTLP/HTTP to VictoriaLogs, a log database started here as a process on
// 127.0.0.1, and for each trace the LogsQL query and the web UI link that
// show its lines, and how many of them are Debug: the failing step's, none
// of the others'.
//
// VictoriaLogs is built from Go modules, in the tool module
// integration/victorialogs of this checkout, into the user cache
// directory, on first use only (see internal/victorialogs): this module's
// go.mod does not gain its dependencies.

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/zaplens/zaplens/internal/victorialogs"
	"github.com/zaplens/zaplens/otlplog"
)

// runVictoriaLogs runs the example against VictoriaLogs, prints where each
// trace's lines are, and then calls hold, which returns when VictoriaLogs
// may stop. progress hears about the first build, which takes minutes.
func runVictoriaLogs(ctx context.Context, stdout, progress io.Writer, hold func(context.Context, *victorialogs.Server) error) error {
	bin, err := victorialogs.Binary(ctx, progress)
	if err != nil {
		return err
	}
	// A fresh database each run: the links show this run's lines only.
	dir, err := os.MkdirTemp("", "zaplens-example-victorialogs-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	srv, err := victorialogs.Start(ctx, bin, victorialogs.Options{DataDir: dir})
	if err != nil {
		return err
	}
	defer srv.Stop()

	service := serviceName().Value.AsString()
	lp, err := otlplog.NewLoggerProvider(ctx,
		otlplog.WithProtocol("http/protobuf"),
		otlplog.WithEndpoint(srv.LogsURL()),
		// One stream per service: VictoriaLogs's default stream key is the
		// whole resource, process.pid included, a new stream every run.
		otlplog.WithHeaders(map[string]string{"VL-Stream-Fields": "service.name"}),
		otlplog.WithServiceName(service))
	if err != nil {
		return err
	}
	// VictoriaLogs stores logs, not spans: the spans are made for their
	// ids, which every line carries, and exported nowhere.
	tp := newTracerProvider()
	traces, err := simulate(ctx, stdout, lp, tp)
	if err != nil {
		return err
	}
	// Make the lines searchable now rather than within the second
	// VictoriaLogs takes on its own, so the counts and links below are
	// complete.
	if err := srv.Flush(ctx); err != nil {
		return err
	}

	fmt.Fprintf(stdout, "\nVictoriaLogs on http://%s, its web UI at %s\n", srv.Addr(), srv.UIURL())
	for i, id := range traces {
		query := "trace_id:=" + id.String()
		n, err := srv.Count(ctx, query)
		if err != nil {
			return err
		}
		debug, err := srv.Count(ctx, query+" "+debugLines)
		if err != nil {
			return err
		}
		failed := ""
		if i+1 == steps {
			failed = ", failed"
		}
		fmt.Fprintf(stdout, "\ntrace %s (step %d%s): %d lines, %d Debug\n  LogsQL: %s\n  vmui:   %s\n", id, i+1, failed, n, debug, query, srv.QueryUIURL(query))
	}
	// The hold: the failing step's Debug lines, held in its trace and
	// shipped when it logged its error; the other steps' were freed when
	// their root spans ended.
	failing := "trace_id:=" + traces[steps-1].String() + " " + debugLines
	fmt.Fprintf(stdout, "\nthe Debug lines of the failing step, held until it failed (the other steps' were dropped):\n  LogsQL: %s\n  vmui:   %s\n", failing, srv.QueryUIURL(failing))
	all := fmt.Sprintf("service.name:=%q", service)
	fmt.Fprintf(stdout, "\nevery line of the run:\n  LogsQL: %s\n  vmui:   %s\n", all, srv.QueryUIURL(all))
	return hold(ctx, srv)
}

// debugLines is the LogsQL filter of Debug lines.
const debugLines = "severity_text:=debug"
