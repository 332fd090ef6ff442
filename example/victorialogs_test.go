package main

import (
	"bytes"
	"context"
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
// vmui link runs the same query. It builds VictoriaLogs on a machine's
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

// The example's lines in each step's trace, by message: see train.
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

var printedTrace = regexp.MustCompile(`(?m)^trace ([0-9a-f]{32}) \(step (\d+)\): (\d+) lines\n  LogsQL: (.+)\n  vmui:   (.+)$`)

// checkPrinted runs each printed query against srv.
func checkPrinted(t *testing.T, ctx context.Context, srv *victorialogs.Server, out string) {
	t.Helper()
	found := printedTrace.FindAllStringSubmatch(out, -1)
	if len(found) != steps {
		t.Fatalf("printed %d traces, want %d:\n%s", len(found), steps, out)
	}
	for _, m := range found {
		id, query, link := m[1], m[4], m[5]
		step, _ := strconv.Atoi(m[2])
		printedN, _ := strconv.Atoi(m[3])
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
		if want := stepLines(step); !slices.Equal(msgs, want) || printedN != len(want) {
			t.Errorf("step %d: %q gives %q (printed as %d lines), want %q", step, query, msgs, printedN, want)
		}
		checkLink(t, srv, link, query)
	}
	if !strings.Contains(out, `LogsQL: service.name:="zaplens-example"`) {
		t.Errorf("no query for the whole run:\n%s", out)
	}
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
