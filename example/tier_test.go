package main

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/zaplens/zaplens/internal/gateways"
)

var (
	printedStored = regexp.MustCompile(`(?m)^\d+ services .* logged (\d+) lines in (\d+) traces; vlselect finds (\d+)$`)
	printedShare  = regexp.MustCompile(`(?m)^  gateway (127\.0\.0\.\d): (\d+) records \(([\d.]+)%\)$`)
	printedOne    = regexp.MustCompile(`(?m)^one trace, (tier-demo-\d+)'s request (\d+): (\d+) lines\n  LogsQL: (.+)\n  vmui:   (.+)$`)
	printedAll    = regexp.MustCompile(`(?m)^every line of the run, by service:\n  LogsQL: (.+)\n  vmui:   (.+)$`)
)

// TestExampleTier runs the -tier mode as -exit does, and, before the tier
// stops, checks what it printed against vlselect: the trace's query finds
// that trace's lines, all of them, as many as printed; every line logged
// is stored; each replica took a share, the shares adding up to the lines
// logged; the vmui links run the printed queries.
//
// Only with ZAPLENS_TIER=long, as TestTier: building the Collector from
// deploy/'s manifest takes minutes on a cold machine, too long for CI's
// runs (once built, this test takes about ten seconds).
//
//	ZAPLENS_TIER=long go test -run '^TestExampleTier$' -v ./example
func TestExampleTier(t *testing.T) {
	if os.Getenv("ZAPLENS_TIER") != "long" {
		t.Skip("the Collector tier runs in the long mode only: ZAPLENS_TIER=long go test -run '^TestExampleTier$' -v ./example")
	}
	var out, progress bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	checked := false
	err := runTier(ctx, &out, &progress, func(ctx context.Context, tr *tierRun) error {
		checked = true
		checkTierPrinted(t, ctx, tr, out.String())
		return nil
	})
	if err != nil {
		t.Fatalf("runTier: %v\nprogress: %s\n%s", err, progress.String(), out.String())
	}
	if !checked {
		t.Fatal("runTier returned before it held the tier")
	}
	if testing.Verbose() {
		t.Logf("%s%s", progress.String(), out.String())
	}
}

func checkTierPrinted(t *testing.T, ctx context.Context, tr *tierRun, out string) {
	t.Helper()
	stored := printedStored.FindStringSubmatch(out)
	if stored == nil {
		t.Fatalf("no count of the lines logged and stored:\n%s", out)
	}
	logged, traces, found := atoi(stored[1]), atoi(stored[2]), atoi(stored[3])
	if want := tierServices * tierBursts * tierBurst; logged != want || found != want || traces != tierServices*tierBursts {
		t.Errorf("printed %d lines logged in %d traces, %d found; want %d in %d, all found", logged, traces, found, want, tierServices*tierBursts)
	}
	if n, err := tr.vl.Count(ctx, "*"); err != nil || n != logged {
		t.Errorf("vlselect counts %d lines (%v), want the %d logged", n, err, logged)
	}

	shares := printedShare.FindAllStringSubmatch(out, -1)
	if len(shares) != len(gateways.Hosts) {
		t.Fatalf("printed %d replicas' shares, want %d:\n%s", len(shares), len(gateways.Hosts), out)
	}
	sum := 0
	for i, s := range shares {
		n := atoi(s[2])
		if s[1] != gateways.Hosts[i] || n == 0 {
			t.Errorf("replica %s took %s records: every replica takes a share", s[1], s[2])
		}
		sum += n
	}
	if sum != logged {
		t.Errorf("the replicas accepted %d records in all, want the %d logged", sum, logged)
	}

	one := printedOne.FindStringSubmatch(out)
	if one == nil {
		t.Fatalf("no trace's query:\n%s", out)
	}
	service, request, n, query, link := one[1], one[2], atoi(one[3]), one[4], one[5]
	rows, err := tr.vl.Select.Query(ctx, query)
	if err != nil {
		t.Fatalf("printed query %q: %v", query, err)
	}
	if len(rows) != tierBurst || n != tierBurst {
		t.Errorf("%q finds %d lines, printed as %d; want the trace's %d", query, len(rows), n, tierBurst)
	}
	lines := map[string]bool{}
	for _, r := range rows {
		if "trace_id:="+r["trace_id"] != query || r["service.name"] != service || r["request"] != request {
			t.Errorf("%q gives the row %v, not of %s's request %s", query, r, service, request)
		}
		lines[r["line"]] = true
	}
	if len(lines) != tierBurst {
		t.Errorf("%q finds %d distinct lines of the burst, want %d", query, len(lines), tierBurst)
	}
	checkLink(t, tr.vl.Select, link, query)

	all := printedAll.FindStringSubmatch(out)
	if all == nil {
		t.Fatalf("no query for the whole run:\n%s", out)
	}
	rows, err = tr.vl.Select.Query(ctx, all[1])
	if err != nil || len(rows) != tierServices {
		t.Fatalf("printed query %q: %v, %v; want a row a service", all[1], rows, err)
	}
	for _, r := range rows {
		if r["lines"] != strconv.Itoa(tierBursts*tierBurst) {
			t.Errorf("%q: %v, want %d lines a service", all[1], r, tierBursts*tierBurst)
		}
	}
	checkLink(t, tr.vl.Select, all[2], all[1])
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
