package otlplog

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/zaplens/zaplens"

	"go.uber.org/zap"

	"github.com/zaplens/zaplens/internal/spool"
	"github.com/zaplens/zaplens/internal/testsupport/childproc"
)

// The spool is proven against processes that really die: each test runs
// children, re-executions of this test binary in TestSpoolChild, that log
// through NewLoggerProvider configured by the environment
// (ZAPLENS_SPOOL_DIR, OTEL_*) to the in-process OTLP server, and then are
// killed (SIGKILL), exit at once (os.Exit), panic in a goroutine, or shut
// down cleanly. A later child on the same directory sends what they left.

const spoolChildEnv = "ZAPLENS_SPOOL_CHILD"

// childReport is what a child that shut down prints on its last line.
type childReport struct {
	Stats       Stats
	Claimed     []string
	ShutdownErr string
}

// TestSpoolChild is the child's side; it does nothing in a normal run.
func TestSpoolChild(t *testing.T) {
	if os.Getenv(spoolChildEnv) == "" {
		t.Skip("a child of the spool tests")
	}
	spoolChild()
}

func spoolChild() {
	env := func(k string) int {
		n, _ := strconv.Atoi(os.Getenv(k))
		return n
	}
	if n := env("ZAPLENS_TEST_FSIZE_BEFORE"); n > 0 {
		setFileSizeLimit(n)
	}
	var opts []Option
	if n := env("ZAPLENS_TEST_SEGMENT"); n > 0 {
		opts = append(opts, providerOptionFunc(func(c *providerConfig) { c.spool.segmentBytes = n }))
	}
	p, err := NewLoggerProvider(context.Background(), opts...)
	if err != nil {
		fmt.Printf("err %s\n", err)
	}
	if n := env("ZAPLENS_TEST_FSIZE_AFTER"); n > 0 {
		setFileSizeLimit(n)
	}
	logger := zap.New(zaplens.NewCore(zaplens.WithLoggerProvider(p)))
	n := env("ZAPLENS_TEST_LINES")
	for i := range n {
		logger.Info("line "+strconv.Itoa(i), zap.Int("i", i), zap.String("phase", "train"))
	}
	fmt.Println("logged")
	switch os.Getenv("ZAPLENS_TEST_END") {
	case "fatal":
		// zaplens flushes a Fatal entry before zap exits: with the collector
		// down, that flush fails, and what it could not send must stay.
		logger.Fatal("line " + strconv.Itoa(n))
	case "kill":
		select {} // until SIGKILL
	case "exit":
		os.Exit(3) // no defer runs, nothing is flushed
	case "panic":
		go func() { panic("a goroutine panics") }()
		select {}
	case "wait":
		_, _ = io.Copy(io.Discard, os.Stdin)
	}
	rep := childReport{}
	if err := shutdownWithin(p, 20*time.Second); err != nil {
		rep.ShutdownErr = err.Error()
	}
	rep.Stats = p.Stats()
	if p.shipper != nil {
		rep.Claimed = p.shipper.Claimed()
	}
	b, _ := json.Marshal(rep)
	fmt.Printf("report %s\n", b)
	os.Exit(0)
}

// setFileSizeLimit sets RLIMIT_FSIZE, ignoring SIGXFSZ so that a write past
// it fails with EFBIG instead of killing the process.
func setFileSizeLimit(n int) {
	signal.Ignore(syscall.SIGXFSZ)
	lim := syscall.Rlimit{Cur: uint64(n), Max: uint64(n)}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		fmt.Printf("setrlimit %v\n", err)
	}
}

// child is a running child process.
type child struct {
	*childproc.Proc
	t       *testing.T
	stderr  *lockedBuffer
	service string
	started time.Time
}

// childSpec is what a child does.
type childSpec struct {
	dir      string
	endpoint string // host:port of the collector, up or not
	service  string
	lines    int
	end      string // kill, exit, panic, wait, or "" to shut down
	env      []string
}

func startChild(t *testing.T, s childSpec) *child {
	t.Helper()
	cmd := childCommand("TestSpoolChild", spoolChildEnv+"=1",
		"ZAPLENS_SPOOL_DIR="+s.dir,
		"OTEL_EXPORTER_OTLP_ENDPOINT=http://"+s.endpoint,
		"OTEL_SERVICE_NAME="+s.service,
		"ZAPLENS_TEST_LINES="+strconv.Itoa(s.lines),
		"ZAPLENS_TEST_END="+s.end)
	cmd.Env = append(cmd.Env, s.env...)
	c := &child{t: t, stderr: &lockedBuffer{}, service: s.service}
	cmd.Stderr = c.stderr
	c.started = time.Now()
	c.Proc = childproc.Start(t, cmd, func(problem string) string {
		return fmt.Sprintf("%s: %s; stderr:\n%s", s.service, problem, c.stderr)
	})
	return c
}

// report waits for the child's report and its exit.
func (c *child) report() childReport {
	c.t.Helper()
	var rep childReport
	if err := json.Unmarshal([]byte(c.Expect("report ")), &rep); err != nil {
		c.t.Fatal(err)
	}
	_ = c.Cmd.Wait()
	return rep
}

// deliveries counts, per service and body, the records the server holds.
func deliveries(s *otlpServer) map[string]map[string]int {
	out := map[string]map[string]int{}
	for _, rl := range s.Resources() {
		svc := ""
		for _, kv := range rl.GetResource().GetAttributes() {
			if kv.Key == "service.name" {
				svc = kv.GetValue().GetStringValue()
			}
		}
		if out[svc] == nil {
			out[svc] = map[string]int{}
		}
		for _, sl := range rl.ScopeLogs {
			for _, r := range sl.LogRecords {
				out[svc][r.GetBody().GetStringValue()]++
			}
		}
	}
	return out
}

// checkAll fails unless each of n lines of service arrived at least once;
// it returns how many arrived twice or more.
func checkAll(t *testing.T, got map[string]map[string]int, service string, n int) (dups int) {
	t.Helper()
	missing := 0
	for i := range n {
		switch c := got[service]["line "+strconv.Itoa(i)]; {
		case c == 0:
			if missing++; missing <= 3 {
				t.Errorf("%s: line %d never arrived", service, i)
			}
		case c > 1:
			dups++
		}
	}
	if missing > 0 {
		t.Errorf("%s: %d of %d lines lost", service, missing, n)
	}
	return dups
}

func segFilesIn(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*.seg"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range m {
		m[i] = filepath.Base(m[i])
	}
	return m
}

// A child killed (SIGKILL, os.Exit, a panic in a goroutine, zap's Fatal,
// which flushes first) while the collector is down loses nothing: the next
// start on the directory sends every line, with the dead process's
// resource and timestamps, in the background, and says so once on stderr.
func TestSpoolKilledWhileCollectorDown(t *testing.T) {
	for _, end := range []string{"kill", "exit", "panic", "fatal"} {
		t.Run(end, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			addr := freeAddr(t)
			lines := 5000
			dead := startChild(t, childSpec{dir: dir, endpoint: addr, service: "dead", lines: lines, end: end})
			n := lines
			if end == "fatal" {
				n++ // the Fatal line
			}
			dead.Expect("logged")
			if end == "kill" {
				dead.Kill()
			} else {
				_ = dead.Cmd.Wait()
			}
			died := time.Now()
			if len(segFilesIn(t, dir)) == 0 {
				t.Fatal("the dead child left no spool file")
			}

			srv := startOTLPServer(t, addr, keepRecords())
			next := startChild(t, childSpec{dir: dir, endpoint: addr, service: "next", lines: 10})
			next.Expect("logged")
			rep := next.report()
			got := deliveries(srv)
			dups := checkAll(t, got, "dead", n)
			checkAll(t, got, "next", 10)
			if rep.Stats.Recovered != uint64(n) || rep.Stats.RecoveredExported != uint64(n) {
				t.Errorf("stats %+v, want %d recovered and exported", rep.Stats, n)
			}
			if !strings.Contains(next.stderr.String(), fmt.Sprintf("found %d log records unsent by 1 process that ended", n)) {
				t.Errorf("no word of the recovery on stderr:\n%s", next.stderr)
			}
			if f := segFilesIn(t, dir); len(f) != 0 {
				t.Errorf("files left: %v", f)
			}
			checkRecovered(t, srv, "dead", dead.Cmd.Process.Pid, dead.started, died)
			t.Logf("%d lines delivered, %d twice", n, dups)
		})
	}
}

// checkRecovered checks that the records of service carry the dead
// process's own resource and the times they were logged at.
func checkRecovered(t *testing.T, srv *otlpServer, service string, pid int, from, to time.Time) {
	t.Helper()
	for _, rl := range srv.Resources() {
		attrs := map[string]string{}
		for _, kv := range rl.GetResource().GetAttributes() {
			attrs[kv.Key] = fmt.Sprint(kv.GetValue().GetStringValue(), kv.GetValue().GetIntValue())
		}
		if !strings.HasPrefix(attrs["service.name"], service) {
			continue
		}
		if want := fmt.Sprint("", pid); attrs["process.pid"] != want {
			t.Fatalf("process.pid %s, want the dead child's %s", attrs["process.pid"], want)
		}
		for _, sl := range rl.ScopeLogs {
			for _, r := range sl.LogRecords {
				ts := time.Unix(0, int64(r.TimeUnixNano))
				if ts.Before(from) || ts.After(to) {
					t.Fatalf("record %q at %v, not within the dead child's life %v to %v", r.GetBody().GetStringValue(), ts, from, to)
				}
			}
		}
	}
}

// A child killed right after a burst, with the collector up, loses nothing
// either: what it had not sent is sent by the next start.
func TestSpoolKilledAfterBurst(t *testing.T) {
	dir := t.TempDir()
	srv := startOTLPServer(t, "127.0.0.1:0", keepRecords())
	const n = 20000
	dead := startChild(t, childSpec{dir: dir, endpoint: srv.Addr, service: "burst", lines: n, end: "kill"})
	dead.Expect("logged")
	dead.Kill()
	next := startChild(t, childSpec{dir: dir, endpoint: srv.Addr, service: "next"})
	rep := next.report()
	dups := checkAll(t, deliveries(srv), "burst", n)
	if rep.Stats.Recovered == 0 {
		// The last batch waits for the schedule delay: some lines are
		// always unsettled when the child dies.
		t.Errorf("nothing recovered of %d lines", n)
	}
	// Only what was in flight when the child died can arrive twice: one
	// batch at most.
	if dups > DefaultBatchSize {
		t.Errorf("%d lines arrived twice, more than one batch of %d", dups, DefaultBatchSize)
	}
	t.Logf("%d of %d recovered after the kill; %d of them had also reached the collector from the killed child", rep.Stats.Recovered, n, dups)
}

// Junk after the last frame of each file (a torn tail), and a corrupt last
// record: each is skipped and counted, and every record before it is sent.
func TestSpoolTornTail(t *testing.T) {
	dir := t.TempDir()
	addr := freeAddr(t)
	const n = 3000
	dead := startChild(t, childSpec{dir: dir, endpoint: addr, service: "torn", lines: n, end: "kill"})
	dead.Expect("logged")
	dead.Kill()
	files := segFilesIn(t, dir)
	var last string // the file whose last record is corrupted
	for _, f := range files {
		path := filepath.Join(dir, f)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		end := len(b)
		for end > 0 && b[end-1] == 0 {
			end--
		}
		if end > 200 { // holds records: corrupt the last one's payload
			b[end-1] ^= 0x55
			last = f
		}
		b = append(b, "\x00\x01torn tail: a write cut short"...)
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if last == "" {
		t.Fatalf("no file with records among %v", files)
	}
	srv := startOTLPServer(t, addr, keepRecords())
	next := startChild(t, childSpec{dir: dir, endpoint: addr, service: "next"})
	rep := next.report()
	got := deliveries(srv)
	checkAll(t, got, "torn", n-1) // all but the corrupt last one
	if got["torn"]["line "+strconv.Itoa(n-1)] != 0 {
		t.Error("the corrupt record was sent")
	}
	if rep.Stats.Torn < uint64(len(files)) || rep.Stats.Recovered != n-1 {
		t.Errorf("stats %+v: want %d recovered, at least %d torn", rep.Stats, n-1, len(files))
	}
	if !strings.Contains(next.stderr.String(), "torn or corrupt frames skipped") {
		t.Errorf("stderr:\n%s", next.stderr)
	}
}

// After a clean shutdown nothing is sent twice; after a clean shutdown
// with the collector down, what could not be sent is kept for the next
// start, which sends it.
func TestSpoolCleanShutdown(t *testing.T) {
	t.Run("collector up", func(t *testing.T) {
		dir := t.TempDir()
		srv := startOTLPServer(t, "127.0.0.1:0", keepRecords())
		first := startChild(t, childSpec{dir: dir, endpoint: srv.Addr, service: "clean", lines: 2000})
		rep := first.report()
		if rep.ShutdownErr != "" || rep.Stats.Exported != 2000 || rep.Stats.Kept != 0 {
			t.Fatalf("first: %+v", rep)
		}
		t.Logf("after the first: %d records; stderr %s", srv.Records.Load(), first.stderr)
		if f := segFilesIn(t, dir); len(f) != 0 {
			t.Errorf("files left after a clean shutdown: %v", f)
		}
		next := startChild(t, childSpec{dir: dir, endpoint: srv.Addr, service: "next"})
		if rep := next.report(); rep.Stats.Recovered != 0 {
			t.Errorf("next recovered %d", rep.Stats.Recovered)
		}
		if dups := checkAll(t, deliveries(srv), "clean", 2000); dups != 0 || srv.Records.Load() != 2000 {
			t.Errorf("%d lines twice, %d records in all", dups, srv.Records.Load())
		}
	})
	t.Run("collector down", func(t *testing.T) {
		dir := t.TempDir()
		addr := freeAddr(t)
		first := startChild(t, childSpec{dir: dir, endpoint: addr, service: "down", lines: 2000})
		rep := first.report()
		if rep.Stats.Kept != 2000 || !strings.Contains(rep.ShutdownErr, "2000 of them kept in the spool") {
			t.Fatalf("first: %+v", rep)
		}
		srv := startOTLPServer(t, addr, keepRecords())
		next := startChild(t, childSpec{dir: dir, endpoint: addr, service: "next"})
		if rep := next.report(); rep.Stats.RecoveredExported != 2000 {
			t.Errorf("next: %+v", rep.Stats)
		}
		checkAll(t, deliveries(srv), "down", 2000)
	})
}

// Eight processes on one directory, half killed: while the other half
// still run, four new ones start and send what the dead left. Each dead
// file is taken by exactly one of them, no live process's file by any, and
// every line of all eight arrives. The four that are killed send to a
// collector that is down, so that all their lines go through the spool.
func TestSpoolEightProcesses(t *testing.T) {
	dir := t.TempDir()
	srv := startOTLPServer(t, "127.0.0.1:0", keepRecords())
	down := freeAddr(t)
	const n = 2000
	ranks := make([]*child, 8)
	for i := range ranks {
		end, endpoint := "wait", srv.Addr
		if i%2 == 0 {
			end, endpoint = "kill", down
		}
		ranks[i] = startChild(t, childSpec{dir: dir, endpoint: endpoint, service: "rank-" + strconv.Itoa(i), lines: n, end: end})
	}
	for _, c := range ranks {
		c.Expect("logged")
	}
	for i := 0; i < 8; i += 2 {
		ranks[i].Kill()
	}
	// A file is a dead process's by its name. A live rank may have taken,
	// sent and removed some of them already, before this listing: those
	// are a dead process's too.
	isDead := func(f string) bool {
		for i := 0; i < 8; i += 2 {
			if strings.HasPrefix(f, strconv.Itoa(ranks[i].Cmd.Process.Pid)+"-") {
				return true
			}
		}
		return false
	}
	deadFiles := map[string]bool{}
	for _, f := range segFilesIn(t, dir) {
		if isDead(f) {
			deadFiles[f] = true
		}
	}
	if len(deadFiles) == 0 {
		t.Fatal("the dead left no files")
	}

	next := make([]*child, 4)
	for i := range next {
		next[i] = startChild(t, childSpec{dir: dir, endpoint: srv.Addr, service: "next-" + strconv.Itoa(i)})
	}
	// A rank that was alive may take a dead one's files too, if its own
	// search (in the background, from its start) ran after the kill.
	takenBy := map[string]string{}
	var recovered uint64
	took := func(who string, rep childReport) {
		recovered += rep.Stats.RecoveredExported
		for _, f := range rep.Claimed {
			if other, ok := takenBy[f]; ok {
				t.Errorf("%s taken by %s and %s", f, other, who)
			}
			takenBy[f] = who
			if !isDead(f) {
				t.Errorf("%s took %s, not a dead process's file", who, f)
			}
		}
	}
	for i, c := range next {
		took("next-"+strconv.Itoa(i), c.report())
	}
	for i := 1; i < 8; i += 2 {
		ranks[i].CloseStdin()
		rep := ranks[i].report()
		if rep.ShutdownErr != "" {
			t.Errorf("rank-%d: %s", i, rep.ShutdownErr)
		}
		took("rank-"+strconv.Itoa(i), rep)
	}
	for f := range deadFiles {
		if _, ok := takenBy[f]; !ok {
			t.Errorf("%s was taken by none", f)
		}
	}
	if recovered != 4*n {
		t.Errorf("%d records recovered, want %d", recovered, 4*n)
	}
	got := deliveries(srv)
	dups := 0
	for i := range ranks {
		dups += checkAll(t, got, "rank-"+strconv.Itoa(i), n)
		if t.Failed() && os.Getenv("DEBUG_SPOOL") != "" {
			t.Logf("rank-%d pid %d stdout %q stderr %s", i, ranks[i].Cmd.Process.Pid, ranks[i].Stdout(), ranks[i].stderr)
		}
	}
	if t.Failed() && os.Getenv("DEBUG_SPOOL") != "" {
		for i, c := range next {
			t.Logf("next-%d stdout %q stderr %s", i, c.Stdout(), c.stderr)
		}
		t.Logf("dead files %v", deadFiles)
	}
	if f := segFilesIn(t, dir); len(f) != 0 {
		t.Errorf("files left: %v", f)
	}
	byWhom := map[string]int{}
	for _, who := range takenBy {
		byWhom[who]++
	}
	t.Logf("%d files of 4 dead processes taken, each once (%d of them listed after the kills; files by taker: %v), %d records recovered; %d lines twice", len(takenBy), len(deadFiles), byWhom, recovered, dups)
}

// A file size limit (RLIMIT_FSIZE) below a spool file's size, from the
// start or from the middle of a run: the spool steps aside, the provider
// works and says so, the loss of protection is counted, and with the
// collector up every line arrives.
func TestSpoolFileSizeLimit(t *testing.T) {
	t.Run("at start", func(t *testing.T) {
		dir := t.TempDir()
		srv := startOTLPServer(t, "127.0.0.1:0", keepRecords())
		c := startChild(t, childSpec{dir: dir, endpoint: srv.Addr, service: "limited", lines: 1000,
			env: []string{"ZAPLENS_TEST_FSIZE_BEFORE=65536"}})
		if msg := c.Expect("err "); !strings.Contains(msg, dir) || !strings.Contains(msg, "without crash protection") {
			t.Errorf("NewLoggerProvider's error: %s", msg)
		}
		rep := c.report()
		if rep.Stats.Unprotected != 1000 || rep.Stats.Exported != 1000 {
			t.Errorf("stats %+v", rep.Stats)
		}
		checkAll(t, deliveries(srv), "limited", 1000)
		if !strings.Contains(c.stderr.String(), "without crash protection") {
			t.Errorf("stderr:\n%s", c.stderr)
		}
	})
	t.Run("mid-run", func(t *testing.T) {
		// Files of 64 KiB, the limit 32 KiB once the first two are made: the
		// burst outruns the exports, the spool needs a third file and
		// cannot make it.
		dir := t.TempDir()
		srv := startOTLPServer(t, "127.0.0.1:0", keepRecords())
		c := startChild(t, childSpec{dir: dir, endpoint: srv.Addr, service: "limited", lines: 2000,
			env: []string{"ZAPLENS_TEST_SEGMENT=65536", "ZAPLENS_TEST_FSIZE_AFTER=32768"}})
		rep := c.report()
		if rep.Stats.Unprotected == 0 || rep.Stats.Dropped != 0 || rep.Stats.Exported != 2000 {
			t.Errorf("stats %+v: want unprotected records, all exported", rep.Stats)
		}
		checkAll(t, deliveries(srv), "limited", 2000)
		if !strings.Contains(c.stderr.String(), "stepped aside: allocate") {
			t.Errorf("stderr:\n%s", c.stderr)
		}
		t.Logf("%d of 2000 unprotected; stderr:\n%s", rep.Stats.Unprotected, c.stderr)
	})
}

// A directory that cannot be made: a working provider, and an error that
// names it.
func TestSpoolUnwritableDir(t *testing.T) {
	cleanEnv(t)
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(file, "spool")
	var got []string
	var mu sync.Mutex
	exp := func(_ context.Context, _ []byte, n int, _ bool) (int, error) {
		mu.Lock()
		got = append(got, "x")
		mu.Unlock()
		return 0, nil
	}
	var stderr lockedBuffer
	p, err := NewLoggerProvider(context.Background(), WithSpool(dir), WithLossWriter(&stderr),
		providerOptionFunc(func(c *providerConfig) { c.exportFunc = exp; c.reportInterval = 20 * time.Millisecond }))
	if err == nil || !strings.Contains(err.Error(), dir) {
		t.Fatalf("error %v, want one naming %s", err, dir)
	}
	logger := zap.New(zaplens.NewCore(zaplens.WithLoggerProvider(p)))
	logger.Info("still logged")
	// The count is told too, while it lasts, not only kept in Stats.
	if !eventually(5*time.Second, func() bool {
		return strings.Contains(stderr.String(), "1 log record went on without crash protection")
	}) {
		t.Errorf("loss writer: %q", stderr.String())
	}
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := p.Stats(); s.Exported != 1 || s.Unprotected != 1 {
		t.Errorf("stats %+v", s)
	}
	if !strings.Contains(stderr.String(), dir) {
		t.Errorf("loss writer: %q", stderr.String())
	}
}

// ZAPLENS_SPOOL_DIR turns the spool on; WithSpool wins over it, and
// WithSpool("") turns it off.
func TestSpoolEnv(t *testing.T) {
	cleanEnv(t)
	envDir, optDir := t.TempDir(), t.TempDir()
	t.Setenv("ZAPLENS_SPOOL_DIR", envDir)
	discard := withDiscardExport()
	for _, tc := range []struct {
		opts []Option
		dir  string
	}{
		{nil, envDir},
		{[]Option{WithSpool(optDir)}, optDir},
		{[]Option{WithSpool("")}, ""},
	} {
		p, err := NewLoggerProvider(context.Background(), append(tc.opts, discard, WithLossWriter(nil))...)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range []string{envDir, optDir} {
			if has := len(segFilesIn(t, d)) > 0; has != (d == tc.dir) {
				t.Errorf("want the spool in %q; %s has files: %v", tc.dir, d, has)
			}
		}
		_ = p.Shutdown(context.Background())
	}
	t.Setenv("ZAPLENS_SPOOL_BYTES", "1000")
	var buf lockedBuffer
	p, err := NewLoggerProvider(context.Background(), discard, WithLossWriter(&buf))
	_ = p.Shutdown(context.Background())
	if err != nil || !strings.Contains(buf.String(), "ZAPLENS_SPOOL_BYTES=1000: must be at least") {
		t.Errorf("a spool bound too small: error %v, warning %q; want it ignored, with a warning", err, buf.String())
	}
}

// ShipSpool, what zaplens-ship runs, sends what a killed child left and
// says so; a second run finds nothing.
func TestShipSpool(t *testing.T) {
	cleanEnv(t)
	dir := t.TempDir()
	addr := freeAddr(t)
	dead := startChild(t, childSpec{dir: dir, endpoint: addr, service: "dead", lines: 3000, end: "kill"})
	dead.Expect("logged")
	dead.Kill()

	ctx := context.Background()
	st, err := ShipSpool(ctx, dir, WithEndpoint("http://"+addr), WithOTLPTimeout(200*time.Millisecond), WithRetryMaxElapsed(200*time.Millisecond), WithLossWriter(nil))
	if err == nil || st.Left != 3000 {
		t.Errorf("with the collector down: %v, %+v", err, st)
	}
	srv := startOTLPServer(t, addr, keepRecords())
	st, err = ShipSpool(ctx, dir, WithEndpoint("http://"+addr), WithLossWriter(nil))
	if err != nil || st.Exported != 3000 || st.Left != 0 || st.Processes != 1 {
		t.Errorf("%v, %+v", err, st)
	}
	checkAll(t, deliveries(srv), "dead", 3000)
	if st, err := ShipSpool(ctx, dir, WithEndpoint("http://"+addr)); err != nil || st.Found != 0 {
		t.Errorf("again: %v, %+v", err, st)
	}
	t.Log(st)
}

// keptLine leaves one line in a spool directory, kept by a provider whose
// collector, at addr, is down.
func keptLine(t *testing.T) (dir, addr string) {
	cleanEnv(t)
	dir, addr = t.TempDir(), freeAddr(t)
	p := newTestProvider(t, WithEndpoint("http://"+addr), WithSpool(dir), WithOTLPTimeout(200*time.Millisecond), WithLossWriter(nil))
	zap.New(zaplens.NewCore(zaplens.WithLoggerProvider(p))).Info("kept")
	_ = p.Shutdown(context.Background()) // no collector: the line is kept
	return dir, addr
}

// ShipSpool reads OTEL_CONFIG_FILE as NewLoggerProvider does: the file
// that names the program's endpoint, and replaces the OTEL_* variables,
// names zaplens-ship's in the job's epilogue too.
func TestShipSpoolReadsConfigFile(t *testing.T) {
	dir, addr := keptLine(t)
	file := filepath.Join(t.TempDir(), "otel.yaml")
	conf := fmt.Sprintf(`{file_format: "1.0-rc.2", logger_provider: {processors: [{batch: {exporter: {otlp_grpc: {endpoint: "http://%s"}}}}]}}`, addr)
	if err := os.WriteFile(file, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("OTEL_CONFIG_FILE", file)
	srv := startOTLPServer(t, addr, keepRecords())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st, err := ShipSpool(ctx, dir, WithLossWriter(nil), WithOTLPTimeout(time.Second))
	if err != nil || st.Exported != 1 || srv.Records.Load() != 1 {
		t.Errorf("%v, %+v, %d records received: want the kept line sent to the file's endpoint", err, st, srv.Records.Load())
	}
}

// ShipSpool does not end in success while it leaves a file unread, here
// one of a newer format, whose records it cannot count: it says which, and
// why.
func TestShipSpoolTellsAFileLeftUnread(t *testing.T) {
	dir, addr := keptLine(t)
	files := segFilesIn(t, dir)
	if len(files) != 1 {
		t.Fatalf("spool files %v, want one", files)
	}
	if err := spool.MarkNewer(filepath.Join(dir, files[0])); err != nil {
		t.Fatal(err)
	}
	srv := startOTLPServer(t, addr, keepRecords())
	var told lockedBuffer
	st, err := ShipSpool(context.Background(), dir, WithEndpoint("http://"+addr), WithLossWriter(&told))
	if err == nil || !strings.Contains(err.Error(), "1 file left unread") || !strings.Contains(err.Error(), "newer format") || st.Unread != 1 {
		t.Errorf("%v, %+v: want the file named as left unread, and why", err, st)
	}
	if !strings.Contains(told.String(), "left as it is, unread") || !strings.Contains(st.String(), "1 file left unread") {
		t.Errorf("told %q, summary %q", told.String(), st.String())
	}
	if n := len(deliveries(srv)); n != 0 || len(segFilesIn(t, dir)) != 1 {
		t.Errorf("%d services delivered, files %v: want nothing sent and the file kept", n, segFilesIn(t, dir))
	}
}

// A flush that fails (the collector down) keeps its records for a later
// process, and only them: what is delivered after the collector comes back
// is settled, and a clean Shutdown leaves nothing that arrived to be sent
// again. Every line arrives once.
func TestSpoolFailedFlushThenDelivered(t *testing.T) {
	cleanEnv(t)
	dir := t.TempDir()
	addr := freeAddr(t)
	opts := func(service string) []Option {
		return []Option{WithEndpoint("http://" + addr), WithSpool(dir), WithServiceName(service)}
	}
	p := newTestProvider(t, opts("first")...)
	logLines := func(from, to int) {
		l := zap.New(zaplens.NewCore(zaplens.WithLoggerProvider(p)))
		for i := from; i < to; i++ {
			l.Info("line " + strconv.Itoa(i))
		}
	}
	logLines(0, 10)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := p.ForceFlush(ctx); err == nil {
		t.Fatal("the flush to no collector succeeded")
	}
	srv := startOTLPServer(t, addr, keepRecords())
	logLines(10, 30)
	if err := p.Shutdown(context.Background()); err == nil {
		t.Error("Shutdown did not tell of the 10 it kept")
	}
	if st := p.Stats(); st.Exported != 20 || st.Failed != 10 || st.Kept != 10 {
		t.Errorf("first: %+v; want 20 exported, 10 failed and kept", st)
	}
	next := newTestProvider(t, opts("next")...)
	if !eventually(10*time.Second, func() bool { return next.Stats().RecoveredExported == 10 }) {
		t.Errorf("next: %+v", next.Stats())
	}
	if err := next.Shutdown(context.Background()); err != nil {
		t.Error(err)
	}
	if st := next.Stats(); st.Recovered != 10 {
		t.Errorf("next recovered %d, want the 10 kept", st.Recovered)
	}
	if dups := checkAll(t, deliveries(srv), "first", 30); dups != 0 {
		t.Errorf("%d lines arrived twice", dups)
	}
	if f := segFilesIn(t, dir); len(f) != 0 {
		t.Errorf("files left: %v", f)
	}
}

// A spool at its smallest bound, filled while the collector is down and
// after a failed flush, takes and delivers new lines once the collector is
// back: what fills it gives way, rather than every new record being refused
// until the process ends.
func TestSpoolFullRecovers(t *testing.T) {
	cleanEnv(t)
	dir := t.TempDir()
	addr := freeAddr(t)
	p := newTestProvider(t, WithEndpoint("http://"+addr), WithSpool(dir), WithSpoolBytes(8<<20),
		WithServiceName("full"), WithOTLPTimeout(time.Second))
	defer p.Shutdown(context.Background())
	l := zap.New(zaplens.NewCore(zaplens.WithLoggerProvider(p)))
	pad := strings.Repeat("x", 100)
	for i := range 70000 { // about 9 MiB of records
		l.Info("down "+strconv.Itoa(i), zap.String("pad", pad))
	}
	if err := l.Sync(); err == nil {
		t.Fatal("the flush to no collector succeeded")
	}
	srv := startOTLPServer(t, addr, keepRecords())
	for i := range 50 {
		l.Info("line " + strconv.Itoa(i))
	}
	arrived := func() bool {
		got := deliveries(srv)["full"]
		for i := range 50 {
			if got["line "+strconv.Itoa(i)] == 0 {
				return false
			}
		}
		return true
	}
	if !eventually(15*time.Second, arrived) {
		t.Errorf("after the collector came back: %v", p.Stats())
	}
	checkAll(t, deliveries(srv), "full", 50)
}

// hungCollector takes connections and never answers: an export to it
// spends its whole timeout.
func hungCollector(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		lis.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return lis.Addr().String()
}

// A Shutdown that spends its whole deadline on a collector that never
// answers still lets every spool file go: what it says it kept is sent at
// once by ShipSpool in the same process, or by a provider rebuilt in it.
func TestSpoolShutdownPastItsDeadlineLetsTheFilesGo(t *testing.T) {
	for _, next := range []string{"ShipSpool", "rebuilt provider"} {
		t.Run(next, func(t *testing.T) {
			cleanEnv(t)
			dir := t.TempDir()
			p := newTestProvider(t, WithEndpoint("http://"+hungCollector(t)), WithSpool(dir), WithServiceName("hung"))
			l := zap.New(zaplens.NewCore(zaplens.WithLoggerProvider(p)))
			for i := range 100 {
				l.Info("line " + strconv.Itoa(i))
			}
			if err := shutdownWithin(p, 300*time.Millisecond); err == nil || !strings.Contains(err.Error(), "100 of them kept in the spool") {
				t.Fatalf("Shutdown: %v; want 100 kept", err)
			}
			srv := startOTLPServer(t, "127.0.0.1:0", keepRecords())
			if next == "ShipSpool" {
				st, err := ShipSpool(context.Background(), dir, WithEndpoint("http://"+srv.Addr), WithLossWriter(nil))
				if err != nil || st.Exported != 100 {
					t.Errorf("ShipSpool: %v, %v; want the 100 kept delivered", err, st)
				}
			} else {
				q := newTestProvider(t, WithEndpoint("http://"+srv.Addr), WithSpool(dir), WithServiceName("rebuilt"))
				if !eventually(10*time.Second, func() bool { return q.Stats().RecoveredExported == 100 }) {
					t.Errorf("the rebuilt provider: %+v; want the 100 kept delivered", q.Stats())
				}
				_ = q.Shutdown(context.Background())
			}
			checkAll(t, deliveries(srv), "hung", 100)
			if f := segFilesIn(t, dir); len(f) != 0 {
				t.Errorf("files left: %v", f)
			}
		})
	}
}

// A spool file cut under its mapping while its records are in flight
// faults as they are settled: the spool says so, lets the file go and goes
// on in the next (it need not step aside), and at a bound of four files
// three times as many records as it holds are all delivered, none refused
// as though the queue were full.
func TestSpoolFaultWhileSettlingDropsNothing(t *testing.T) {
	cleanEnv(t)
	dir := t.TempDir()
	var exported atomic.Int64
	inFlight, release := make(chan struct{}), make(chan struct{})
	var first sync.Once
	exp := func(_ context.Context, _ []byte, n int, _ bool) (int, error) {
		first.Do(func() { close(inFlight); <-release })
		exported.Add(int64(n))
		return 0, nil
	}
	var stderr lockedBuffer
	p := newTestProvider(t, WithSpool(dir), WithSpoolBytes(8<<20), WithLossWriter(&stderr),
		providerOptionFunc(func(c *providerConfig) { c.exportFunc = exp; c.spool.segmentBytes = 2 << 20 }))
	l := zap.New(zaplens.NewCore(zaplens.WithLoggerProvider(p)))
	l.Info("in flight")
	flushed := make(chan struct{})
	go func() { _ = l.Sync(); close(flushed) }()
	<-inFlight
	files := segFilesIn(t, dir) // the first, the active one, and its spare
	if err := os.Truncate(filepath.Join(dir, files[0]), 0); err != nil {
		t.Fatal(err)
	}
	close(release)
	<-flushed // settled, and faulted, before the next record is written
	pad := strings.Repeat("x", 100)
	const n = 180000 // about 24 MiB of records
	for i := range n {
		l.Info("line "+strconv.Itoa(i), zap.String("pad", pad))
		if i%10000 == 0 {
			_ = l.Sync()
		}
	}
	if err := p.Shutdown(context.Background()); err != nil {
		t.Error(err)
	}
	if s := p.Stats(); s.Dropped != 0 || s.Exported != n+1 || exported.Load() != n+1 {
		t.Errorf("stats %v: want all %d delivered", s, n+1)
	}
	if out := stderr.String(); !strings.Contains(out, "fault in the mapped file") || strings.Contains(out, "stepped aside") {
		t.Errorf("loss writer: %q; want the fault told, and the spool going on in the next file", out)
	}
}

// A spool directory another user owns, or others may write in, is refused
// with a working provider and an error that says which; a file planted in
// it is not sent, by the provider nor by ShipSpool.
func TestSpoolUnsafeDirRefused(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chown to another user needs root")
	}
	for _, tc := range []struct {
		name, want string
		edit       func(dir string) error
	}{
		{"foreign owner", "is owned by uid 65534", func(dir string) error { return os.Chown(dir, 65534, 65534) }},
		{"world-writable", "is writable by its group or others (mode 0777)", func(dir string) error { return os.Chmod(dir, 0o777) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cleanEnv(t)
			srv := startOTLPServer(t, "127.0.0.1:0", keepRecords())
			dir := t.TempDir()
			// The planted file: one record kept by a provider on another
			// directory, handed to nobody.
			src := t.TempDir()
			p := newTestProvider(t, WithEndpoint("http://"+freeAddr(t)), WithSpool(src), WithServiceName("planted-by-nobody"),
				WithOTLPTimeout(100*time.Millisecond))
			zap.New(zaplens.NewCore(zaplens.WithLoggerProvider(p))).Info("planted")
			_ = p.Shutdown(context.Background())
			for _, f := range segFilesIn(t, src) {
				if err := os.Rename(filepath.Join(src, f), filepath.Join(dir, f)); err != nil {
					t.Fatal(err)
				}
				if err := os.Chown(filepath.Join(dir, f), 65534, 65534); err != nil {
					t.Fatal(err)
				}
			}
			if err := tc.edit(dir); err != nil {
				t.Fatal(err)
			}
			var stderr lockedBuffer
			p, err := NewLoggerProvider(context.Background(), WithEndpoint("http://"+srv.Addr), WithSpool(dir),
				WithServiceName("mine"), WithLossWriter(&stderr))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), dir) {
				t.Errorf("NewLoggerProvider: %v; want %q", err, tc.want)
			}
			zap.New(zaplens.NewCore(zaplens.WithLoggerProvider(p))).Info("mine")
			if err := p.Shutdown(context.Background()); err != nil {
				t.Error(err)
			}
			if s := p.Stats(); s.Exported != 1 || s.Unprotected != 1 || s.Recovered != 0 {
				t.Errorf("stats %+v: want the line delivered unprotected, nothing recovered", s)
			}
			st, err := ShipSpool(context.Background(), dir, WithEndpoint("http://"+srv.Addr), WithLossWriter(nil))
			if err == nil || !strings.Contains(err.Error(), tc.want) || st.Files != 0 {
				t.Errorf("ShipSpool: %v, %v; want %q and nothing taken", err, st, tc.want)
			}
			if got := deliveries(srv); len(got["planted-by-nobody"]) != 0 || len(got["mine"]) != 1 {
				t.Errorf("delivered %v: want mine only", got)
			}
		})
	}
}
