package integration

// VictoriaLogs, a real log database, as the backend: built from Go modules
// in the tool module victorialogs/ (see internal/victorialogs), started as a
// process on 127.0.0.1, fed by zaplens over OTLP/HTTP and queried back with
// LogsQL. This is the step users come for: find a trace's lines.
//
// The first build on a machine takes about a minute with the modules in
// the module cache, a few more without; later runs reuse the binary from
// the user cache directory. A failed build fails the tests; a developer in
// a hurry may set ZAPLENS_SKIP_VICTORIALOGS=1 to skip them instead, except
// under CI=true.

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zaplens/zaplens/internal/testsupport"
	"github.com/zaplens/zaplens/internal/victorialogs"
	"github.com/zaplens/zaplens/otlplog"
)

const vlSkipEnv = "ZAPLENS_SKIP_VICTORIALOGS"

// Set by TestMain, which clears every ZAPLENS_* variable before the tests.
var vlSkip, vlCI bool

var (
	vlBinOnce sync.Once
	vlBin     string
	vlBinErr  error
)

// vlBinary builds VictoriaLogs once per test binary (and once per machine:
// the binary is kept in the user cache directory).
func vlBinary(t *testing.T) string {
	t.Helper()
	if vlSkip && !vlCI {
		t.Skipf("%s=1: VictoriaLogs tests skipped", vlSkipEnv)
	}
	vlBinOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
		defer cancel()
		start := time.Now()
		vlBin, vlBinErr = victorialogs.Binary(ctx, nil)
		t.Logf("VictoriaLogs binary %s ready in %v", vlBin, time.Since(start).Round(time.Millisecond))
	})
	if vlBinErr != nil {
		// Not a skip: CI must not pass with the real backend untested.
		t.Fatalf("VictoriaLogs could not be built: %v\n(set %s=1 to skip these tests outside CI)", vlBinErr, vlSkipEnv)
	}
	return vlBin
}

// vlStart starts VictoriaLogs on addr ("" for a free port) with the given
// data directory, stopped at the end of the test.
func vlStart(t *testing.T, addr, dataDir string) *victorialogs.Server {
	t.Helper()
	s, err := victorialogs.Start(context.Background(), vlBinary(t), victorialogs.Options{Addr: addr, DataDir: dataDir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// vlProvider is zaplens's pipeline sending to VictoriaLogs at logsURL over
// OTLP/HTTP. The stream is keyed by service.name alone: by default
// VictoriaLogs keys it by the whole resource, process.pid included, which
// makes a new stream per process start.
func vlProvider(t *testing.T, logsURL, service string, opts ...otlplog.Option) (*otlplog.LoggerProvider, *testsupport.LockedBuffer) {
	t.Helper()
	losses := &testsupport.LockedBuffer{}
	all := []otlplog.Option{
		otlplog.WithProtocol("http/protobuf"),
		otlplog.WithEndpoint(logsURL),
		otlplog.WithHeaders(map[string]string{"VL-Stream-Fields": "service.name"}),
		otlplog.WithServiceName(service),
		otlplog.WithLossWriter(losses),
	}
	return e2eProviderWith(t, losses, append(all, opts...)...)
}

// vlQuery runs query until it returns want rows or 10 s pass, and
// returns the last answer. A query may see fewer rows than were sent only
// until the export and the flush are done; more is never right, and is
// returned at once.
func vlQuery(t *testing.T, s *victorialogs.Server, query string, want int) []map[string]string {
	t.Helper()
	var rows []map[string]string
	err := vlPoll(s, 10*time.Second, func(ctx context.Context) (enough bool, err error) {
		rows, err = s.Query(ctx, query)
		return len(rows) >= want, err
	})
	if err != nil {
		t.Fatalf("query %q: %v", query, err)
	}
	return rows
}

// vlCount is vlQuery for `query | count()`, tried for 20 s.
func vlCount(t *testing.T, s *victorialogs.Server, query string, want int) int {
	t.Helper()
	var n int
	err := vlPoll(s, 20*time.Second, func(ctx context.Context) (enough bool, err error) {
		n, err = s.Count(ctx, query)
		return n >= want, err
	})
	if err != nil {
		t.Fatalf("count %q: %v", query, err)
	}
	return n
}

// vlPoll calls ask until it says it has enough without error, or d
// passes. Before each try, which has 5 s, it flushes VictoriaLogs's
// in-memory rows, unseen by queries until then. It returns the last try's
// error, the flush's or ask's.
func vlPoll(s *victorialogs.Server, d time.Duration, ask func(ctx context.Context) (enough bool, err error)) error {
	var err error
	testsupport.Eventually(d, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err = s.Flush(ctx); err != nil {
			return false
		}
		var enough bool
		enough, err = ask(ctx)
		return err == nil && enough
	})
	return err
}

// vlDump logs rows, for a failure's message.
func vlDump(t *testing.T, rows []map[string]string) {
	t.Helper()
	for _, r := range rows {
		keys := slices.Sorted(maps.Keys(r))
		var b strings.Builder
		for _, k := range keys {
			fmt.Fprintf(&b, " %s=%q", k, r[k])
		}
		t.Logf("row:%s", b.String())
	}
}
