package main

import (
	"bytes"
	"context"
	"math"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zaplens/zaplens/internal/victorialogs"
)

// TestExampleVictoriaLogs runs the -victorialogs mode and, while
// VictoriaLogs still runs, checks what it printed: for each step's trace
// the LogsQL query returns that trace's lines, as many as printed, and the
// vmui link runs the same query. The hold: the failing step's Debug lines
// are all there, with their own times and span ids, and no other step's
// is, while their Info lines are. It builds VictoriaLogs on a machine's
// first run (about a minute; a few more without the module cache); the
// integration tests then reuse the binary.
func TestExampleVictoriaLogs(t *testing.T) {
	if os.Getenv("ZAPLENS_SKIP_VICTORIALOGS") == "1" && os.Getenv("CI") != "true" {
		t.Skip("ZAPLENS_SKIP_VICTORIALOGS=1: VictoriaLogs tests skipped")
	}
	t.Setenv("OTEL_SERVICE_NAME", "")
	t.Setenv("OTEL_SDK_DISABLED", "")

	var out, progress bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	checked := false
	err := runVictoriaLogs(ctx, &out, &progress, func(ctx context.Context, srv *victorialogs.Server) error {
		checked = true
		checkPrinted(t, ctx, srv, out.String())
		return nil
	})
	if err != nil {
		t.Fatalf("runVictoriaLogs: %v\nprogress: %s\n%s", err, progress.String(), out.String())
	}
	if !checked {
		t.Fatal("runVictoriaLogs returned before it held VictoriaLogs")
	}
	if testing.Verbose() {
		t.Logf("%s%s", progress.String(), out.String())
	}
}

// The example's lines in each step's trace bridged at Info and up, by
// message: see train.
func stepLines(step int) []string {
	lines := []string{"batch ready", "step done"}
	if step == 3 {
		lines = append(lines, "gradient norm clipped")
	}
	if step%2 == 0 {
		lines = append(lines, "checkpoint saved")
	}
	if step == steps {
		lines = append(lines, "checkpoint upload failed")
	}
	slices.Sort(lines)
	return lines
}

// The example's Debug lines in each step's trace, in the order logged:
// see train and upload.
func stepDebug(step int) []string {
	lines := []string{"prefetch queue", "optimizer state"}
	switch {
	case step == steps:
		lines = append(lines, "upload attempt", "upload attempt", "upload attempt")
	case step%2 == 0:
		lines = append(lines, "upload attempt")
	}
	return lines
}

// allDebug is every step's Debug lines.
func allDebug() []string {
	var all []string
	for step := 1; step <= steps; step++ {
		all = append(all, stepDebug(step)...)
	}
	return all
}

var (
	printedTrace = regexp.MustCompile(`(?m)^trace ([0-9a-f]{32}) \(step (\d+)(, failed)?\): (\d+) lines, (\d+) Debug\n  LogsQL: (.+)\n  vmui:   (.+)$`)
	printedHeld  = regexp.MustCompile(`(?m)^the Debug lines of the failing step, .*:\n  LogsQL: (.+)\n  vmui:   (.+)$`)
)

// checkPrinted runs each printed query against srv.
func checkPrinted(t *testing.T, ctx context.Context, srv *victorialogs.Server, out string) {
	t.Helper()
	found := printedTrace.FindAllStringSubmatch(out, -1)
	if len(found) != steps {
		t.Fatalf("printed %d traces, want %d:\n%s", len(found), steps, out)
	}
	jsonPart, _, _ := strings.Cut(out, "\nVictoriaLogs on ")
	logged := jsonLines(t, jsonPart)
	for _, m := range found {
		id, failed, query, link := m[1], m[3] != "", m[6], m[7]
		step, _ := strconv.Atoi(m[2])
		printedN, _ := strconv.Atoi(m[4])
		printedDebug, _ := strconv.Atoi(m[5])
		rows, err := srv.Query(ctx, query)
		if err != nil {
			t.Fatalf("printed query %q: %v", query, err)
		}
		var msgs []string
		for _, r := range rows {
			msgs = append(msgs, r["_msg"])
			if r["trace_id"] != id || r["service.name"] != "zaplens-example" || !strings.HasPrefix(r["scope.name"], "trainer.") {
				t.Errorf("step %d: row %v", step, r)
			}
		}
		slices.Sort(msgs)
		// A step that succeeded: its Info lines, none of its Debug lines,
		// though it logged them (on stdout); the failing one: all of both.
		want, wantDebug := stepLines(step), 0
		if step == steps {
			want, wantDebug = append(want, stepDebug(step)...), len(stepDebug(step))
			slices.Sort(want)
		}
		if !slices.Equal(msgs, want) || printedN != len(want) || printedDebug != wantDebug || failed != (step == steps) {
			t.Errorf("step %d: %q gives %q (printed as %d lines, %d Debug, failed %v), want %q, %d Debug", step, query, msgs, printedN, printedDebug, failed, want, wantDebug)
		}
		if got := messages(debugLogged(logged, id)); !slices.Equal(got, stepDebug(step)) {
			t.Errorf("step %d logged Debug lines %q on stdout, want %q", step, got, stepDebug(step))
		}
		checkLink(t, srv, link, query)
	}
	held := printedHeld.FindStringSubmatch(out)
	if held == nil {
		t.Fatalf("no query for the failing step's Debug lines:\n%s", out)
	}
	checkHeld(t, ctx, srv, held[1], debugLogged(logged, found[steps-1][1]))
	checkLink(t, srv, held[2], held[1])
	if !strings.Contains(out, `LogsQL: service.name:="zaplens-example"`) {
		t.Errorf("no query for the whole run:\n%s", out)
	}
}

// checkHeld: query finds the Debug lines logged, in their order, each with
// its own time and span id.
func checkHeld(t *testing.T, ctx context.Context, srv *victorialogs.Server, query string, logged []line) {
	t.Helper()
	rows, err := srv.Query(ctx, query+" | sort by (_time)")
	if err != nil {
		t.Fatalf("printed query %q: %v", query, err)
	}
	if len(rows) != len(logged) {
		t.Fatalf("%q finds %d lines, want the %d Debug lines the failing step logged", query, len(rows), len(logged))
	}
	for i, r := range rows {
		l := logged[i]
		at, err := time.Parse(time.RFC3339Nano, r["_time"])
		// Base's ts is zap's epoch seconds, a float64: exact to a quarter
		// of a microsecond now; the lines are milliseconds apart.
		sec, frac := math.Modf(l.TS)
		logTime := time.Unix(int64(sec), int64(frac*1e9))
		if err != nil || at.Sub(logTime).Abs() > time.Microsecond {
			t.Errorf("held line %d %q has _time %q, want its own, %v (%v)", i, r["_msg"], r["_time"], logTime, err)
		}
		if r["_msg"] != l.Msg || r["span_id"] != l.SpanID || r["severity_text"] != "debug" {
			t.Errorf("held line %d: %q in span %s (%s), want %q in span %s", i, r["_msg"], r["span_id"], r["severity_text"], l.Msg, l.SpanID)
		}
	}
}

// debugLogged is the Debug lines of trace id on the example's stdout, in
// order.
func debugLogged(lines []line, id string) []line {
	var out []line
	for _, l := range lines {
		if l.Level == "debug" && l.TraceID == id {
			out = append(out, l)
		}
	}
	return out
}

// checkLink: the link is vmui's, which answers, and carries the query in
// the fragment vmui reads its parameters from.
func checkLink(t *testing.T, srv *victorialogs.Server, link, query string) {
	t.Helper()
	page, frag, ok := strings.Cut(link, "#/?")
	if !ok || page != srv.UIURL() {
		t.Errorf("link %q is not vmui's %s#/?...", link, srv.UIURL())
		return
	}
	v, err := url.ParseQuery(frag)
	if err != nil || v.Get("query") != query {
		t.Errorf("link %q: query %q (%v), want %q", link, v.Get("query"), err, query)
	}
	resp, err := http.Get(page)
	if err != nil {
		t.Fatalf("vmui: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("vmui answers %s", resp.Status)
	}
}

func messages(lines []line) []string {
	var out []string
	for _, l := range lines {
		out = append(out, l.Msg)
	}
	return out
}
