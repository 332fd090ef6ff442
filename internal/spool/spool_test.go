package spool

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	"google.golang.org/protobuf/proto"

	"github.com/zaplens/zaplens/internal/otlpwire"
	"github.com/zaplens/zaplens/internal/pipeline"
)

const testSegment = 64 << 10

func encoded(body string) []byte {
	return otlpwire.AppendRecord(nil, &otlpwire.Record{Time: time.Unix(1700000000, 0), Severity: log.SeverityInfo,
		Body: attribute.StringValue(body)}, nil, otlpwire.DefaultLimits)
}

func openTest(t testing.TB, dir string, mod func(*Config)) *Spool {
	t.Helper()
	cfg := Config{Dir: dir, SegmentBytes: testSegment, MaxBytes: 64 * testSegment,
		Resource: otlpwire.NewResource([]attribute.KeyValue{attribute.String("service.name", "writer")}, "")}
	if mod != nil {
		mod(&cfg)
	}
	s, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.AddScope(0, otlpwire.NewScope("a", "", "", nil))
	s.AddScope(1, otlpwire.NewScope("b", "v1", "", nil))
	return s
}

// received is what a collector got: "service/scope/body" per record.
type received struct {
	mu    sync.Mutex
	lines []string
	calls int
	fail  int // fail this many calls first
}

func (r *received) export(_ context.Context, body []byte, n int, _ bool) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	if r.fail > 0 {
		r.fail--
		return n, errors.New("collector down")
	}
	var req collogspb.ExportLogsServiceRequest
	if err := proto.Unmarshal(body, &req); err != nil {
		return n, err
	}
	got := 0
	for _, rl := range req.ResourceLogs {
		svc := rl.GetResource().GetAttributes()[0].GetValue().GetStringValue()
		for _, sl := range rl.ScopeLogs {
			for _, lr := range sl.LogRecords {
				r.lines = append(r.lines, svc+"/"+sl.GetScope().GetName()+"/"+lr.GetBody().GetStringValue())
				if lr.TimeUnixNano != uint64(time.Unix(1700000000, 0).UnixNano()) {
					return n, fmt.Errorf("timestamp %d", lr.TimeUnixNano)
				}
				got++
			}
		}
	}
	if got != n {
		return n, fmt.Errorf("%d records, told %d", got, n)
	}
	return 0, nil
}

func (r *received) sorted() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := append([]string(nil), r.lines...)
	sort.Strings(out)
	return out
}

func shipAll(t *testing.T, dir string, r *received, once bool, edit ...func(*ShipConfig)) *Shipper {
	t.Helper()
	cfg := ShipConfig{Dir: dir, Export: r.export, MaxBatchRecords: 100, MaxRequestBytes: 1 << 20,
		ExportTimeout: 5 * time.Second, Once: once}
	for _, e := range edit {
		e(&cfg)
	}
	sh := Ship(cfg)
	select {
	case <-sh.Done():
	case <-time.After(20 * time.Second):
		t.Fatal("shipper did not finish")
	}
	return sh
}

func segFiles(t testing.TB, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*.seg"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// Records left unsettled by a closed spool are read back whole, across
// files, with their resource, scopes and timestamps, and the files go.
func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, nil)
	const n = 3000
	for i := range n {
		if v := s.Append(i%2, encoded(fmt.Sprintf("line %05d", i))); v != pipeline.Journaled {
			t.Fatalf("record %d: verdict %d", i, v)
		}
	}
	s.Settle(1000, false)
	s.Close(context.Background())
	if s.Kept() != n-1000 {
		t.Errorf("kept %d, want %d", s.Kept(), n-1000)
	}
	if len(segFiles(t, dir)) < 2 {
		t.Fatalf("want several files, have %v", segFiles(t, dir))
	}
	var r received
	sh := shipAll(t, dir, &r, false)
	got := r.sorted()
	if len(got) != n-1000 {
		t.Fatalf("shipped %d, want %d", len(got), n-1000)
	}
	var want []string
	for j := 1000; j < n; j++ {
		want = append(want, fmt.Sprintf("writer/%s/line %05d", map[int]string{0: "a", 1: "b"}[j%2], j))
	}
	sort.Strings(want)
	for i, line := range got {
		if line != want[i] {
			t.Fatalf("line %d: %q, want %q", i, line, want[i])
		}
	}
	if c := sh.Counts(); c.Found != n-1000 || c.Exported != n-1000 || c.Torn != 0 || c.Processes != 1 {
		t.Errorf("counts %+v", c)
	}
	if f := segFiles(t, dir); len(f) != 0 {
		t.Errorf("files left after shipping: %v", f)
	}
}

// Settled files are removed as the pipeline settles, and a closed spool
// with everything settled leaves nothing.
func TestSettledFilesGo(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, nil)
	const n = 20000
	for i := range n {
		s.Append(0, encoded(fmt.Sprintf("line %d", i)))
	}
	before := len(segFiles(t, dir))
	if before <= 1+maxSpares {
		t.Fatalf("%d files before settling: the test wants more than the active one and the spares", before)
	}
	s.Settle(n, false)
	deadline := time.Now().Add(5 * time.Second)
	for len(segFiles(t, dir)) > 1+maxSpares && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := len(segFiles(t, dir)); n > 1+maxSpares {
		t.Errorf("%d files before settling, %d after: want the active one and the spares", before, n)
	}
	s.Close(context.Background())
	if s.Kept() != 0 {
		t.Errorf("kept %d", s.Kept())
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*")); len(m) != 0 {
		t.Errorf("left %v", m)
	}
}

// At its bound the spool refuses records, and takes them again once files
// are settled.
func TestBound(t *testing.T) {
	dir := t.TempDir()
	var mu sync.Mutex
	var said []string
	s := openTest(t, dir, func(c *Config) {
		c.MaxBytes = 3 * testSegment
		c.Say = func(l string) { mu.Lock(); said = append(said, l); mu.Unlock() }
	})
	defer s.Close(context.Background())
	rec := encoded("a line of some length, to fill the files quickly enough")
	accepted, written := 0, 0
	full := false
	for range 20000 {
		v := s.Append(0, rec)
		written++
		if v == pipeline.JournalFull {
			written-- // a refused record is not the journal's
			full = true
			break
		}
		if v == pipeline.Journaled {
			accepted++
		} else {
			time.Sleep(time.Millisecond) // no file ready yet: the housekeeper makes them
		}
	}
	if !full {
		t.Fatal("no bound")
	}
	if v := s.Append(0, rec); v != pipeline.JournalFull {
		t.Errorf("past the bound: verdict %d", v)
	}
	// Told once, when it first turns a record away: the loss report counts
	// them.
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(said) > 0 })
	mu.Lock()
	if len(said) != 1 || !strings.Contains(said[0], "at its bound") || !strings.Contains(said[0], "dropped") {
		t.Errorf("told %q: want the bound told once, and that records are dropped", said)
	}
	mu.Unlock()
	s.Settle(written, false)
	deadline := time.Now().Add(5 * time.Second)
	for s.Append(0, rec) != pipeline.Journaled {
		if time.Now().After(deadline) {
			t.Fatal("no room after settling")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A record is settled by its own fate: the ones kept (no collector
// answered) stay for a later process, and only they, however many settled
// after them, in the same file or later ones.
func TestKeepOnlyWhatWasKept(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, nil)
	const n = 3000 // about three files
	for i := range n {
		s.Append(i%2, encoded(fmt.Sprintf("line %04d", i)))
	}
	var want []string
	for _, step := range []struct {
		n    int
		keep bool
	}{{400, false}, {10, true}, {1000, false}, {5, true}, {1, false}, {700, true}, {884, false}} {
		if step.keep {
			for i := int(s.decided); i < int(s.decided)+step.n; i++ {
				want = append(want, fmt.Sprintf("writer/%s/line %04d", []string{"a", "b"}[i%2], i))
			}
		}
		s.Settle(step.n, step.keep)
	}
	s.Close(context.Background())
	if s.Kept() != uint64(len(want)) {
		t.Errorf("kept %d, want %d", s.Kept(), len(want))
	}
	var r received
	shipAll(t, dir, &r, true)
	sort.Strings(want)
	if got := r.sorted(); !slices.Equal(got, want) {
		t.Errorf("shipped %d records, want the %d kept", len(got), len(want))
	}
	if left := segFiles(t, dir); len(left) != 0 {
		t.Errorf("left %v", left)
	}
}

// At its bound, a spool whose files hold only records kept for a later
// process lets the oldest go, and says so, rather than refuse every new
// record for good.
func TestFullOfKeptTakesNewRecords(t *testing.T) {
	dir := t.TempDir()
	var said []string
	var mu sync.Mutex
	s := openTest(t, dir, func(c *Config) {
		c.MaxBytes = 4 * testSegment
		c.Say = func(l string) { mu.Lock(); said = append(said, l); mu.Unlock() }
	})
	defer s.Close(context.Background())
	written := 0
	for ; written < 100000; written++ {
		if s.Append(0, encoded(fmt.Sprintf("down %d", written))) != pipeline.Journaled {
			break
		}
	}
	s.Settle(written, true) // the collector never answered
	for i := range 3 * written {
		if v := s.Append(0, encoded(fmt.Sprintf("up %d", i))); v != pipeline.Journaled {
			t.Fatalf("record %d after the outage: verdict %d", i, v)
		}
		s.Settle(1, false)
	}
	waitFor(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return slices.ContainsFunc(said, func(l string) bool { return strings.Contains(l, "let go to make room") })
	})
}

// A directory that cannot be made: the spool steps aside, records go on
// unjournaled, and it comes back once a file can be made, and says so.
func TestComesBack(t *testing.T) {
	defer func(d time.Duration) { retryInterval = d }(retryInterval)
	retryInterval = 20 * time.Millisecond
	parent := filepath.Join(t.TempDir(), "parent")
	os.WriteFile(parent, nil, 0o600)
	said := make(chan string, 4)
	s, err := Open(Config{Dir: filepath.Join(parent, "spool"), SegmentBytes: testSegment, Say: func(l string) { said <- l }})
	if err == nil {
		t.Fatal("no error")
	}
	defer s.Close(context.Background())
	s.AddScope(0, otlpwire.Scope{})
	if v := s.Append(0, encoded("x")); v != pipeline.Unjournaled {
		t.Fatalf("verdict %d", v)
	}
	os.Remove(parent)
	deadline := time.Now().Add(5 * time.Second)
	for s.Append(0, encoded("y")) != pipeline.Journaled {
		if time.Now().After(deadline) {
			t.Fatal("the spool did not come back")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if line := <-said; !strings.Contains(line, "writing again") {
		t.Errorf("said %q", line)
	}
}

// Junk after the last frame, a torn frame, and a corrupt one in the middle:
// each is counted, and every sound record is kept.
func TestTornAndCorrupt(t *testing.T) {
	for _, tc := range []struct {
		name    string
		damage  func(b []byte, ends []int) []byte
		lost    int // records not shipped
		torn    uint64
		records int
	}{
		{"junk appended", func(b []byte, _ []int) []byte { return append(b, "junk junk junk"...) }, 0, 1, 50},
		{"junk after the frames", func(b []byte, ends []int) []byte {
			copy(b[ends[len(ends)-1]:], []byte{0x40, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
			return b
		}, 0, 1, 50},
		{"torn last frame", func(b []byte, ends []int) []byte {
			last := ends[len(ends)-2]
			b[last+20] ^= 0xff
			return b
		}, 1, 1, 50},
		{"corrupt frame in the middle", func(b []byte, ends []int) []byte {
			b[ends[10]+20] ^= 0xff
			return b
		}, 1, 1, 50},
		{"length cut in the middle", func(b []byte, ends []int) []byte {
			b[ends[10]] = 0xff
			b[ends[10]+1] = 0xff
			return b
		}, 39, 1, 50},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := openTest(t, dir, nil)
			var ends []int // where each frame after the first record's starts
			for i := range tc.records {
				s.Append(0, encoded(fmt.Sprintf("line %d", i)))
				ends = append(ends, s.active.off)
			}
			s.Close(context.Background())
			// ends[i] is the end of record i; the frame of record i+1
			// starts there.
			files := segFiles(t, dir)
			if len(files) != 1 {
				t.Fatalf("files %v", files)
			}
			b, _ := os.ReadFile(files[0])
			b = tc.damage(b, ends)
			os.WriteFile(files[0], b, 0o600)
			var r received
			sh := shipAll(t, dir, &r, true)
			if got := len(r.sorted()); got != tc.records-tc.lost {
				t.Errorf("shipped %d, want %d", got, tc.records-tc.lost)
			}
			if c := sh.Counts(); c.Torn != tc.torn {
				t.Errorf("torn %d, want %d (%+v)", c.Torn, tc.torn, c)
			}
		})
	}
}

// A live spool's files are never taken; shippers on one directory send
// each record once. (A file may be taken by a second shipper after the
// first has sent it all: then it holds nothing to send.)
func TestClaims(t *testing.T) {
	dir := t.TempDir()
	for w := range 4 {
		s := openTest(t, dir, nil)
		for i := range 1000 {
			s.Append(0, encoded(fmt.Sprintf("w%d line %d", w, i)))
		}
		s.Close(context.Background())
	}
	live := openTest(t, dir, nil)
	defer live.Close(context.Background())
	live.Append(0, encoded("alive"))

	var r received
	var wg sync.WaitGroup
	shippers := make([]*Shipper, 3)
	for i := range shippers {
		wg.Go(func() { shippers[i] = shipAll(t, dir, &r, true) })
	}
	wg.Wait()
	got := r.sorted()
	if len(got) != 4000 {
		t.Errorf("shipped %d records, want 4000", len(got))
	}
	for i := 1; i < len(got); i++ {
		if got[i] == got[i-1] {
			t.Fatalf("%q shipped twice", got[i])
		}
	}
	seen := map[string]int{}
	for i, sh := range shippers {
		for _, name := range sh.Claimed() {
			if j, ok := seen[name]; ok {
				// Taken after the other sent it all: nothing sent twice.
				t.Logf("%s taken by shippers %d and %d", name, j, i)
			}
			seen[name] = i
			if len(name) > len(live.Prefix()) && name[:len(live.Prefix())] == live.Prefix() {
				t.Errorf("a live spool's file was taken: %s", name)
			}
		}
	}
	if f := segFiles(t, dir); len(f) != 2 {
		t.Errorf("want the live spool's two files left, have %v", f)
	}
}

// A file a dead process was making is removed; one a live process is
// making is not touched.
func TestStaleFilesBeingMade(t *testing.T) {
	dir := t.TempDir()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip(err)
	}
	deadName := fmt.Sprintf(".%d-1-00000001.seg.tmp", dead.Process.Pid)
	liveName := fmt.Sprintf(".%d-1-00000001.seg.tmp", os.Getpid())
	for _, n := range []string{deadName, liveName} {
		os.WriteFile(filepath.Join(dir, n), nil, 0o600)
	}
	shipAll(t, dir, &received{}, true)
	if _, err := os.Stat(filepath.Join(dir, deadName)); !os.IsNotExist(err) {
		t.Errorf("a dead process's file being made is still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, liveName)); err != nil {
		t.Errorf("a live process's file being made was touched: %v", err)
	}
}

// A shipper that cannot export leaves the files for later, once; in the
// background, it tries again.
func TestShipRetries(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, nil)
	for i := range 10 {
		s.Append(0, encoded(fmt.Sprintf("line %d", i)))
	}
	s.Close(context.Background())
	r := received{fail: 1}
	sh := shipAll(t, dir, &r, true)
	if c := sh.Counts(); c.Left() != 10 || len(segFiles(t, dir)) != 1 {
		t.Fatalf("after a failed pass: %+v, files %v", c, segFiles(t, dir))
	}
	r.fail = 1
	sh = shipAll(t, dir, &r, false)
	if c := sh.Counts(); c.Left() != 0 || c.Exported != 10 || len(segFiles(t, dir)) != 0 {
		t.Fatalf("after retrying: %+v, files %v", c, segFiles(t, dir))
	}
}

// The shipper reads each file it takes once, for its count and its
// sending both.
func TestShipReadsEachFileOnce(t *testing.T) {
	old := readFile
	t.Cleanup(func() { readFile = old })
	reads := map[int]int{} // by descriptor; written by the shipper, read after Done
	readFile = func(fd int) ([]byte, error) { reads[fd]++; return old(fd) }
	dir := t.TempDir()
	s := openTest(t, dir, nil)
	for i := range 3000 {
		s.Append(i%2, encoded(fmt.Sprintf("line %d", i)))
	}
	s.Close(context.Background())
	var r received
	sh := shipAll(t, dir, &r, true)
	if c := sh.Counts(); c.Files < 2 || c.Exported != 3000 || len(reads) != int(c.Files) {
		t.Fatalf("counts %+v, reads by descriptor %v: want every record sent from several files", c, reads)
	}
	for fd, n := range reads {
		if n != 1 {
			t.Errorf("descriptor %d read %d times", fd, n)
		}
	}
}

// A file cut short after the shipper counted it, under its mapping, is not
// the death of the process: its record, found, is lost with the cut, told,
// and the file done with, as one cut while it is sent (before, an error of
// the file, its record counted left, and no one counted it lost).
func TestShipFileCutShort(t *testing.T) {
	dir := t.TempDir()
	files := oneRecordLeft(t, dir)
	var r received
	var said []string
	sh := shipAll(t, dir, &r, true, func(c *ShipConfig) {
		c.Say = func(s string) {
			said = append(said, s)
			os.Truncate(files[0], 0) // the first line comes between the count and the sending
		}
	})
	if c := sh.Counts(); c.Found != 0 || c.Lost != 1 || c.Exported != 0 || sh.Err() != nil {
		t.Fatalf("counts %+v, error %v: want the record found, then lost with the cut", c, sh.Err())
	}
	if len(said) != 2 || !strings.Contains(said[1], "was cut short while it was sent (0 bytes of") {
		t.Errorf("said %q: want the count, then the cut and its loss", said)
	}
	if left := segFiles(t, dir); len(left) != 0 {
		t.Errorf("left %v: the file is done with", left)
	}
}

// A file the count cannot read is let go, with its error, and left for a
// later process: were it read for the sending, its records would be sent
// uncounted, and more exported than found.
func TestShipLeavesFileCountCannotRead(t *testing.T) {
	old := readFile
	t.Cleanup(func() { readFile = old })
	failed := map[int]bool{} // by descriptor; written by the shipper, read after Done
	readFile = func(fd int) ([]byte, error) {
		if !failed[fd] {
			failed[fd] = true
			return nil, errors.New("cannot map")
		}
		return old(fd)
	}
	dir := t.TempDir()
	files := oneRecordLeft(t, dir)
	var r received
	sh := shipAll(t, dir, &r, true)
	if c := sh.Counts(); c.Found != 0 || c.Exported != 0 || c.Left() != 0 || c.Unread != 1 || sh.UnreadErr() == nil || !strings.Contains(sh.UnreadErr().Error(), files[0]) {
		t.Fatalf("counts %+v, error %v: want nothing found or sent, the file unread, and its error", c, sh.UnreadErr())
	}
	if left := segFiles(t, dir); !slices.Equal(left, files) {
		t.Errorf("files left %v, want %v", left, files)
	}
}

// A file cut short while the shipper sends it, between two requests: the
// second request is built from the mapping after the cut, and reading it
// faults. The shipper reads the file again as the cut left it, sends the
// records still in it, and counts and tells those the cut took as lost
// (found, then lost: not in Found, not left), once; the file is done with.
// Before, they were counted left, with an error, and once the file was cut
// to nothing (then grown back to 24 bytes by the first request's settled
// count), no later process could count them. 200 records of 110 bytes lie
// on seven pages, the first 20 settled in the header, and the second
// request's start on the fourth. A file cut while it waits its turn
// (counted, mapped, not yet read to send: here a later process's, cut
// while the first one's is sent) is the same: its first read faults.
func TestShipFileCutWhileSending(t *testing.T) {
	for _, tc := range []struct {
		name  string
		size  int64 // the file's after the cut
		later bool  // the file cut is a second process's, waiting its turn
		sent  int   // records delivered: the first request's and those whole on the pages the cut left; 0: more than found-100, fewer than found
	}{
		{"to nothing", 0, false, 100},
		{"to five pages", 5 << 12, false, 0},
		{"waiting its turn, to nothing", 0, true, 180},
		{"waiting its turn, to five pages", 5 << 12, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			procs := 1
			if tc.later {
				procs = 2
			}
			for p := range procs {
				s := openTest(t, dir, nil)
				for i := range 200 {
					s.Append(0, encoded(fmt.Sprintf("line %d.%03d %s", p, i, strings.Repeat("x", 84))))
				}
				s.Settle(20, false)
				s.Close(context.Background())
			}
			files := segFiles(t, dir)
			if len(files) != procs {
				t.Fatalf("files %v", files)
			}
			slices.Sort(files) // the later process's last
			target := files[len(files)-1]
			var r received
			cut := false // written by the shipper, read after Done
			export := func(ctx context.Context, body []byte, n int, final bool) (int, error) {
				if !cut {
					cut = true
					os.Truncate(target, tc.size) // body is the request's own copy
				}
				return r.export(ctx, body, n, final)
			}
			said := &lineSaid{}
			sh := shipAll(t, dir, &r, true, func(c *ShipConfig) { c.Export, c.Say = export, said.say })
			c := sh.Counts()
			got, found := len(r.sorted()), 180*procs
			if tc.sent > 0 && got != tc.sent || tc.sent == 0 && (got <= found-100 || got >= found) ||
				c.Exported != uint64(got) || c.Found != c.Exported || c.Lost != uint64(found-got) || c.Left() != 0 || sh.Err() != nil {
				t.Errorf("%d delivered, counts %+v, error %v: want the records the cut left delivered, the others lost, none left", got, c, sh.Err())
			}
			if want := fmt.Sprintf("%s was cut short while it was sent (%d bytes of %d): %d log records", filepath.Base(target), tc.size, testSegment, found-got); !strings.Contains(said.all(), want) {
				t.Errorf("said:\n%s\nwant %q", said.all(), want)
			}
			if left := segFiles(t, dir); len(left) != 0 {
				t.Errorf("left %v: counted once, the file is done with", left)
			}
		})
	}
}

// A page of a file failing to read while the shipper sends it, the file
// not cut (an I/O error): nothing is counted lost, the file is left as it
// is, its records counted left, for a later try, and the shipper does not
// read it again and again.
func TestShipPageFailingWhileSending(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, nil)
	for i := range 200 {
		s.Append(0, encoded(fmt.Sprintf("line %03d %s", i, strings.Repeat("x", 86))))
	}
	s.Close(context.Background())
	old := readFile
	t.Cleanup(func() { readFile = old })
	var mem []byte // written by the shipper, read in its export
	readFile = func(fd int) ([]byte, error) {
		b, err := old(fd)
		mem = b
		return b, err
	}
	var r received
	failed := false
	export := func(ctx context.Context, body []byte, n int, final bool) (int, error) {
		if !failed {
			failed = true
			syscall.Mprotect(mem[5<<12:6<<12], syscall.PROT_NONE) // body is the request's own copy
		}
		return r.export(ctx, body, n, final)
	}
	sh := shipAll(t, dir, &r, true, func(c *ShipConfig) { c.Export = export })
	if c := sh.Counts(); c.Found != 200 || c.Exported != 100 || c.Lost != 0 || c.Left() != 100 || sh.Err() == nil || len(segFiles(t, dir)) != 1 {
		t.Errorf("counts %+v, error %v, files %v: want the first hundred sent, the others left in the file", c, sh.Err(), segFiles(t, dir))
	}
}

// The shipper's requests stay under the byte bound, each scope's bytes
// counted with its first record in the request, and carry every record.
func TestShipRequestsStayUnderBound(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, nil)
	s.AddScope(2, otlpwire.NewScope("big", "", "", []attribute.KeyValue{attribute.String("k", strings.Repeat("v", 500))}))
	for i := range 3000 {
		s.Append(i/7%2*2, encoded(fmt.Sprintf("line %d", i)))
	}
	s.Close(context.Background())
	const bound = 2048
	var r received
	var sizes []int // written by the shipper, read after Done
	export := func(ctx context.Context, body []byte, n int, final bool) (int, error) {
		sizes = append(sizes, len(body))
		return r.export(ctx, body, n, final)
	}
	sh := shipAll(t, dir, &r, true, func(c *ShipConfig) {
		c.Export, c.MaxBatchRecords, c.MaxRequestBytes = export, 1000, bound
	})
	if c := sh.Counts(); c.Exported != 3000 || len(sizes) < 10 {
		t.Fatalf("counts %+v in %d requests", c, len(sizes))
	}
	for i, n := range sizes {
		if n > bound {
			t.Errorf("request %d: %d bytes, over the bound %d", i, n, bound)
		}
	}
}

// A scope the file numbers far past any other, as another writer might, is
// sent with its records, and costs no more than another: the shipper
// numbers the scopes it reads afresh, so that a request makes no room for
// every number below it.
func TestShipFarScopeNumber(t *testing.T) {
	dir := t.TempDir()
	mem := make([]byte, testSegment)
	putHeader(mem, len(mem), 1, 1)
	res := otlpwire.NewResource([]attribute.KeyValue{attribute.String("service.name", "writer")}, "")
	off := putFrame(mem, headerSize, kindResource, resourcePayload(res))
	var far uint32 = kindFirst - 1
	off = putFrame(mem, off, kindScope, scopePayload(int(far), otlpwire.NewScope("far", "", "", nil))) // on 32 bits int(far) wraps, and is written back as far
	putFrame(mem, off, far, encoded("line"))
	if err := os.WriteFile(filepath.Join(dir, segName("1-1-", 1)), mem, 0o600); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var r received
	shipAll(t, dir, &r, true)
	runtime.ReadMemStats(&after)
	if got := r.sorted(); len(got) != 1 || got[0] != "writer/far/line" {
		t.Errorf("shipped %v, want writer/far/line", got)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 64<<20 {
		t.Errorf("shipping one record allocated %d MiB", n>>20)
	}
}

// A background shipper's waits between failed exports grow to the bound,
// each by a random part of its step: ranks that restarted together do not
// retry in lockstep, and no wait passes the bound.
func TestShipRetryJitter(t *testing.T) {
	old := retryWait
	t.Cleanup(func() { retryWait = old })
	var waits []time.Duration // written by the shipper, read after Done
	retryWait = func(_ *Shipper, d time.Duration) bool { waits = append(waits, d); return true }
	dir := t.TempDir()
	oneRecordLeft(t, dir)
	steps := []time.Duration{1, 2, 4, 8, 16, 30, 30, 30, 30}
	r := received{fail: len(steps)}
	if c := shipAll(t, dir, &r, false).Counts(); c.Exported != 1 || len(waits) != len(steps) {
		t.Fatalf("%+v after waits %v: want the record sent after %d waits", c, waits, len(steps))
	}
	for i, d := range waits {
		if step := steps[i] * time.Second; d < step/2 || d >= step {
			t.Errorf("wait %d: %v, want at least %v and under %v", i, d, step/2, step)
		}
	}
	if capped := waits[len(waits)-4:]; slices.Equal(capped, slices.Repeat(capped[:1], 4)) {
		t.Errorf("waits at the bound all %v: no jitter", capped[0])
	}
}

// refusal is the collector's verdict on a request: sending it again would
// not help.
type refusal struct{}

func (refusal) Error() string  { return "HTTP 400: bad request" }
func (refusal) Answered() bool { return true }

// A request the collector refuses for good is settled as rejected, and the
// records after it are sent: recovery is not stuck on it forever.
func TestShipGoesOnPastRefusal(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, nil)
	for i := range 250 {
		s.Append(0, encoded(fmt.Sprintf("line %03d", i)))
	}
	s.Close(context.Background())
	var r received
	calls := 0
	export := func(ctx context.Context, body []byte, n int, final bool) (int, error) {
		if calls++; calls == 2 {
			return n, refusal{}
		}
		return r.export(ctx, body, n, final)
	}
	sh := shipAll(t, dir, &r, true, func(c *ShipConfig) { c.Export = export })
	c := sh.Counts()
	if c.Found != 250 || c.Exported != 150 || c.Rejected != 100 || c.Left() != 0 {
		t.Errorf("counts %+v: want 150 exported, 100 rejected, none left", c)
	}
	if got := r.sorted(); len(got) != 150 || got[100] != "writer/a/line 200" {
		t.Errorf("shipped %d", len(got))
	}
	if left := segFiles(t, dir); len(left) != 0 {
		t.Errorf("left %v", left)
	}
}

// A record too big for any file goes in memory only, and ends the active
// file: the files hold consecutive records, so the one after it must not be
// counted as settled with it, and survives a death.
func TestOversizeRecordLeavesNoGap(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, nil)
	if v := s.Append(0, encoded("r0")); v != pipeline.Journaled {
		t.Fatal(v)
	}
	if v := s.Append(0, encoded(strings.Repeat("x", 2*testSegment))); v != pipeline.Unjournaled {
		t.Fatal(v)
	}
	if v := s.Append(0, encoded("r2")); v != pipeline.Journaled {
		t.Fatal(v)
	}
	s.Settle(2, false) // r0 and the big one: r2 is still in flight
	s.Close(context.Background())
	var r received
	shipAll(t, dir, &r, true)
	if got := r.sorted(); len(got) != 1 || !strings.HasSuffix(got[0], "/r2") {
		t.Fatalf("shipped %v, kept %d: want r2 alone", got, s.Kept())
	}
}

// A housekeeper that is late (a starved CPU, a slow disk) leaves no
// record unprotected: the logging call makes the file itself, or empties a
// settled one.
func TestLateHousekeeperLeavesNothingUnprotected(t *testing.T) {
	old := makeFile
	t.Cleanup(func() { makeFile = old })
	var stalled, first atomic.Bool
	slow := make(chan struct{})
	makeFile = func(dir, name string, size, pid int, created int64, res []byte) (*segment, error) {
		if stalled.Load() && first.CompareAndSwap(false, true) {
			<-slow // the housekeeper's next file, the first asked for, never comes
		}
		return old(dir, name, size, pid, created, res)
	}
	s := openTest(t, t.TempDir(), nil)
	defer func() { close(slow); s.Close(context.Background()) }()
	waitFor(t, func() bool { return len(segFiles(t, s.cfg.Dir)) >= 2 }) // the housekeeper's first spare
	stalled.Store(true)
	// Fill the first file until the spare takes over: that wakes the
	// housekeeper to make the next, and it is that making which stalls,
	// before any call needs a file of its own.
	line := func(i int) {
		if v := s.Append(0, encoded(fmt.Sprintf("line %d", i))); v != pipeline.Journaled {
			t.Fatalf("record %d: verdict %d", i, v)
		}
	}
	firstFile, i := s.active, 0
	for ; s.active == firstFile; i++ {
		line(i)
	}
	waitFor(t, first.Load)
	// Nothing settled, nothing to empty: every file after the spare is
	// one the housekeeper would have had to make.
	for ; i < 20000; i++ {
		line(i)
	}
}

// At the bound, a logging call waits for a housekeeper that is making the
// last file at most maxMadeWait: a stalled disk leaves the record
// unprotected, counted, rather than every logging call stalled behind it.
func TestStalledHousekeeperAtTheBoundStallsNoCall(t *testing.T) {
	old := makeFile
	t.Cleanup(func() { makeFile = old })
	var made atomic.Int32
	slow := make(chan struct{})
	makeFile = func(dir, name string, size, pid int, created int64, res []byte) (*segment, error) {
		if made.Add(1) > 1 {
			<-slow // the second file, the last the bound allows, never comes
		}
		return old(dir, name, size, pid, created, res)
	}
	s := openTest(t, t.TempDir(), func(c *Config) { c.MaxBytes = 2 * testSegment })
	defer func() { close(slow); s.Close(context.Background()) }()
	waitFor(t, func() bool { return made.Load() >= 2 }) // the housekeeper is on it
	done := make(chan pipeline.Verdict)
	go func() {
		first := s.active
		for i := 0; ; i++ {
			if v := s.Append(0, encoded(fmt.Sprintf("line %d", i))); v != pipeline.Journaled || s.active != first {
				done <- v
				return
			}
		}
	}()
	select {
	case v := <-done:
		if v != pipeline.Unjournaled {
			t.Errorf("verdict %d past the first file, want unjournaled", v)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a logging call waits on the stalled housekeeper")
	}
	// One call waited; the spool stepped aside, and the calls after it
	// wait for nothing (at 100 ms each, these 30 would take 3 s).
	if !s.broken.Load() {
		t.Error("the spool did not step aside")
	}
	start := time.Now()
	for i := range 30 {
		if v := s.Append(0, encoded(fmt.Sprintf("after %d", i))); v != pipeline.Unjournaled {
			t.Fatalf("verdict %d after stepping aside, want unjournaled", v)
		}
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("30 calls after the first unprotected one took %v: each waits on the housekeeper again", d)
	}
}

// The count keeps the files mapped, not their parsed records: through an
// outage of the collector the heap holds nothing per record of the files
// that wait.
func TestCountKeepsNoIndex(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, nil)
	for i := range 3000 {
		s.Append(i%2, encoded(fmt.Sprintf("line %d", i)))
	}
	s.Close(context.Background())
	sh := &Shipper{cfg: ShipConfig{Dir: dir}}
	orphans, err := sh.claim()
	if err != nil || len(orphans) < 2 {
		t.Fatalf("claimed %d files, %v", len(orphans), err)
	}
	// Parsed, the records take 32 bytes each at least: the heap after the
	// count, with the files taken still held, must not grow by a quarter
	// of that. Two collections each time: what waits on a finalizer or a
	// cleanup goes only in the second, and going during the count would
	// hide as much growth.
	heap := func() int64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&m)
		return int64(m.HeapAlloc)
	}
	before := heap()
	orphans = sh.count(orphans)
	if grew := heap() - before; grew > 3000*8 {
		t.Errorf("the heap grew by %d bytes over the count of 3000 records: parsed records kept", grew)
	}
	for i := range orphans {
		if orphans[i].mem == nil {
			t.Errorf("%s: not mapped", orphans[i].name)
		}
		orphans[i].close()
	}
	if c := sh.Counts(); c.Found != 3000 || c.Files != uint64(len(orphans)) {
		t.Errorf("found %d in %d files, %d readable: want 3000, all readable", c.Found, c.Files, len(orphans))
	}
}

// waitFor polls ok until it holds, failing the test after 10 s.
func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !ok(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
	}
}

// A file let go at the bound and taken again marks its records from its
// own start: a walk left where the file's first life ended would mark a
// kept record settled, and send a settled one again.
func TestEvictedFileMarksItsOwnRecords(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, func(c *Config) { c.MaxBytes = 2 * testSegment })
	written := 0
	for ; s.Append(0, encoded(fmt.Sprintf("old %d", written))) == pipeline.Journaled; written++ {
	}
	for _, seg := range slices.Clone(s.segs) {
		// The first kept, the second settled (marked), the rest kept.
		s.Settle(1, true)
		s.Settle(1, false)
		s.Settle(int(seg.written)-2, true)
	}
	for i := range 3 {
		if v := s.Append(0, encoded(fmt.Sprintf("new %d", i))); v != pipeline.Journaled {
			t.Fatalf("new %d: verdict %d", i, v)
		}
	}
	s.Settle(1, false)
	s.Settle(1, true)
	s.Settle(1, false)
	s.Close(context.Background())
	var r received
	shipAll(t, dir, &r, true)
	got := r.sorted()
	if !slices.Contains(got, "writer/a/new 1") || slices.Contains(got, "writer/a/new 0") || slices.Contains(got, "writer/a/new 2") {
		t.Errorf("shipped %d records: want new 1, kept, and neither new 0 nor new 2, settled", len(got))
	}
}

// At a bound of two files, every record settled at once: none is refused
// as at the bound while the housekeeper empties a settled file, and a
// logging call making the last file leaves the housekeeper nothing to fail
// at.
func TestNoneRefusedWhileAFileComesBack(t *testing.T) {
	var said atomic.Int32
	s := openTest(t, t.TempDir(), func(c *Config) {
		c.MaxBytes = 2 * testSegment
		c.Say = func(string) { said.Add(1) }
	})
	defer s.Close(context.Background())
	rec := encoded("a line of some length, to fill the files quickly enough")
	for i := range 300000 {
		if v := s.Append(0, rec); v != pipeline.Journaled {
			t.Fatalf("record %d: verdict %d, with nothing unsettled", i, v)
		}
		s.Settle(1, false)
	}
	if n := said.Load(); n != 0 {
		t.Errorf("the spool said %d lines: stepped aside for nothing", n)
	}
}

// oneRecordLeft closes a spool in dir holding one record no collector
// took, and returns the files it left.
func oneRecordLeft(t *testing.T, dir string) []string {
	t.Helper()
	s := openTest(t, dir, nil)
	s.Append(0, encoded("line"))
	s.Close(context.Background())
	return segFiles(t, dir)
}

// A file of a newer format is left as it is, for the zaplens that wrote
// it, not taken for junk and removed.
func TestNewerFormatLeftAlone(t *testing.T) {
	dir := t.TempDir()
	files := oneRecordLeft(t, dir)
	if len(files) != 1 {
		t.Fatalf("files %v", files)
	}
	if err := MarkNewer(files[0]); err != nil {
		t.Fatal(err)
	}
	var r received
	var said []string
	sh := shipAll(t, dir, &r, true, func(c *ShipConfig) { c.Say = func(s string) { said = append(said, s) } })
	if left := segFiles(t, dir); len(left) != 1 || len(r.sorted()) != 0 || !errors.Is(sh.UnreadErr(), errNewerVersion) {
		t.Errorf("left %v, shipped %v, error %v: want the file left, nothing sent, and the reason", left, r.sorted(), sh.UnreadErr())
	}
	if c := sh.Counts(); c.Unread != 1 || len(said) != 1 || !strings.Contains(said[0], "left as it is, unread: "+errNewerVersion.Error()) {
		t.Errorf("counts %+v, said %q: want the file counted and told as unread", c, said)
	}
}

// unmapped reports whether the housekeeper removed seg: it is no longer
// among the mapped files, nor counted as coming.
func unmapped(s *Spool, seg *segment) bool {
	s.hmu.Lock()
	defer s.hmu.Unlock()
	return !slices.Contains(s.mapped, seg) && s.coming == 0
}

// fillAndSettle appends and settles records one by one until as many
// files as told have taken over, each record journaled.
func fillAndSettle(t *testing.T, s *Spool, files int) {
	t.Helper()
	for seen, i := 0, 0; seen < files; i++ {
		active := s.active
		if v := s.Append(0, encoded(fmt.Sprintf("after %d", i))); v != pipeline.Journaled {
			t.Fatalf("record %d: verdict %d", i, v)
		}
		s.Settle(1, false)
		if s.active != active {
			seen++
		}
	}
}

// A settled file the housekeeper cannot empty for a later turn (its name
// gone from under it) is removed, and its place under the bound given back.
func TestHousekeeperRemovesAFileItCannotEmpty(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, func(c *Config) { c.MaxBytes = 2 * testSegment })
	defer s.Close(context.Background())
	first := s.active
	if err := os.Remove(first.path); err != nil {
		t.Fatal(err)
	}
	written := 0
	for ; s.active == first; written++ {
		if v := s.Append(0, encoded(fmt.Sprintf("line %d", written))); v != pipeline.Journaled {
			t.Fatalf("record %d: verdict %d", written, v)
		}
	}
	s.Settle(written, false) // the first file goes to the housekeeper, which fails to empty it
	waitFor(t, func() bool { return unmapped(s, first) })
	if first.mem != nil {
		t.Error("the file the housekeeper could not empty is still mapped")
	}
	fillAndSettle(t, s, 5) // at a bound of two files, with one lost the spool would be full
}

// A held file a logging call lets go at the bound and cannot empty (its
// name gone from under it) goes to the housekeeper, which removes it; the
// call takes the next, and the file's place under the bound is given back.
func TestEvictedFileThatCannotBeEmptiedIsRemoved(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, func(c *Config) { c.MaxBytes = 2 * testSegment })
	defer s.Close(context.Background())
	written := 0
	for ; s.Append(0, encoded(fmt.Sprintf("down %d", written))) == pipeline.Journaled; written++ {
	}
	s.Settle(written, true) // the collector never answered: both files held
	if len(s.held) != 2 {
		t.Fatalf("%d files held, want 2", len(s.held))
	}
	first := s.held[0]
	if err := os.Remove(first.path); err != nil {
		t.Fatal(err)
	}
	if v := s.Append(0, encoded("up")); v != pipeline.Journaled {
		t.Fatalf("verdict %d at the bound with a held file to let go", v)
	}
	s.Settle(1, false)
	waitFor(t, func() bool { return unmapped(s, first) })
	if first.mem != nil {
		t.Error("the file the logging call could not empty is still mapped")
	}
	fillAndSettle(t, s, 5)
}

// A resource or scope payload whose length says more than the payload
// holds is refused, a length of 2^31 and more too, which an int of 32 bits
// would read as negative.
func TestPayloadLengthBeyondThePayload(t *testing.T) {
	for _, n := range []uint32{5, 1 << 31, math.MaxUint32} {
		p := order.AppendUint32(nil, n)
		p = append(p, "abcd"...)
		if _, err := parseResource(p); err != errBadPayload {
			t.Errorf("resource, length %d: %v", n, err)
		}
		q := order.AppendUint32(order.AppendUint32(nil, 1), n)
		q = append(q, "abcd"...)
		if _, _, err := parseScope(q); err != errBadPayload {
			t.Errorf("scope, length %d: %v", n, err)
		}
	}
	if _, err := parseResource(order.AppendUint32(nil, 0)); err != nil {
		t.Errorf("an empty resource: %v", err)
	}
}

// A frame whose length is the largest a length word holds is torn, and
// parsing stops there: on 32 bits the offset after it does not fit an int.
func TestFrameLengthBeyondTheFile(t *testing.T) {
	mem := make([]byte, testSegment)
	putHeader(mem, len(mem), 1, 1)
	order.PutUint32(mem[headerSize:], math.MaxUint32&^settledBit)
	var c *contents
	var err error
	if ferr := guardFault(func() { c, err = parse(mem, true) }); ferr != nil || err != nil || c.torn != 1 || len(c.records) != 0 {
		t.Errorf("fault %v, error %v, contents %+v: want one torn frame and nothing else", ferr, err, c)
	}
}

// Close with its context done, and the housekeeper stalled on the disk,
// still lets every file of the pipeline's go at once: unlocked, for this
// process or another to send. The housekeeper removes its own as it stops.
func TestCloseWithItsDeadlinePastLetsEveryFileGo(t *testing.T) {
	old := makeFile
	t.Cleanup(func() { makeFile = old })
	var stall atomic.Bool
	stalled, slow := make(chan struct{}), make(chan struct{})
	makeFile = func(dir, name string, size, pid int, created int64, res []byte) (*segment, error) {
		if stall.Load() {
			close(stalled)
			<-slow
		}
		return old(dir, name, size, pid, created, res)
	}
	dir := t.TempDir()
	s := openTest(t, dir, nil)
	waitFor(t, func() bool { return len(segFiles(t, dir)) >= 2 }) // the first spare
	stall.Store(true)
	first, i := s.active, 0
	for ; s.active == first; i++ { // the spare takes over: the housekeeper makes the next, and stalls
		s.Append(0, encoded(fmt.Sprintf("line %d", i)))
	}
	<-stalled
	s.Settle(i-1, false) // all but the last record, in the second file
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s.Close(ctx)
	if s.Kept() != 1 {
		t.Errorf("kept %d, want 1", s.Kept())
	}
	files := segFiles(t, dir)
	if len(files) != 1 {
		t.Fatalf("files %v, want the one holding the unsettled record", files)
	}
	if fd, ok := lockFile(files[0]); !ok {
		t.Error("the file kept is still locked")
	} else {
		syscall.Close(fd)
	}
	close(slow)
	<-s.done
	var r received
	shipAll(t, dir, &r, true)
	if got := r.sorted(); len(got) != 1 || got[0] != fmt.Sprintf("writer/a/line %d", i-1) {
		t.Errorf("shipped %v, want the last line only", got)
	}
	if left, err := filepath.Glob(filepath.Join(dir, "*")); len(left) != 0 || err != nil {
		t.Errorf("left %v, %v: want nothing once the housekeeper stopped", left, err)
	}
}

// A fault while settling (here the file cut under its mapping) lets the
// faulted file go and wedges nothing: at a bound of four files, records go
// on being journaled, and none is refused as at the bound. A fault in the
// active file steps aside, told, until the next file takes over; one in an
// older file leaves the active file as it is.
func TestFaultWhileSettlingWedgesNothing(t *testing.T) {
	for _, where := range []string{"active", "older"} {
		t.Run(where, func(t *testing.T) {
			said := make(chan string, 16)
			s := openTest(t, t.TempDir(), func(c *Config) {
				c.MaxBytes = 4 * testSegment
				c.Say = func(l string) { said <- l }
			})
			defer s.Close(context.Background())
			waitFor(t, func() bool { return s.spareReady.Load() })
			first, i := s.active, 0
			for ; i < 100 || (where == "older" && s.active == first); i++ {
				if v := s.Append(0, encoded(fmt.Sprintf("line %d", i))); v != pipeline.Journaled {
					t.Fatalf("record %d: verdict %d", i, v)
				}
			}
			active, path := s.active, first.path // the housekeeper renames it as it empties it
			if err := os.Truncate(path, 0); err != nil {
				t.Fatal(err)
			}
			s.Settle(i/2, false) // the first file faults
			s.Settle(i-i/2, false)
			switch line := <-said; {
			case !strings.Contains(line, "fault in the mapped file") || !strings.Contains(line, path):
				t.Errorf("said %q, want the fault and the file", line)
			case where == "older" && s.active != active:
				t.Error("a fault in an older file let the active file go")
			}
			fillAndSettle(t, s, 12) // three times the bound
			// Told once a file, not once a settle.
			for len(said) > 0 {
				if line := <-said; strings.Contains(line, "fault in the mapped file") {
					t.Errorf("the fault told again: %q", line)
				}
			}
		})
	}
}

// A file cut in its middle under the mapping faults when a record is
// written past the cut; its head is still there, and the records settled
// after the fault are counted settled in it, so that a later process
// reading the file sends again none of what was delivered (a SIGKILL
// after a cut sent the whole file again, 14,815 lines in the fault
// harness's cut rounds).
func TestCutFileKeepsSettling(t *testing.T) {
	said := make(chan string, 16)
	s := openTest(t, t.TempDir(), func(c *Config) { c.Say = func(l string) { said <- l } })
	defer s.Close(context.Background())
	waitFor(t, func() bool { return s.spareReady.Load() })
	first := s.active
	n := 0
	for ; n < 50; n++ {
		s.Append(0, encoded(fmt.Sprintf("line %d", n)))
	}
	if err := os.Truncate(first.path, testSegment/2); err != nil {
		t.Fatal(err)
	}
	for ; s.active == first; n++ { // a write past the cut faults, and the file steps aside
		s.Append(0, encoded(fmt.Sprintf("line %d %s", n, strings.Repeat("x", 500))))
	}
	if line := <-said; !strings.Contains(line, "fault in the mapped file") {
		t.Fatalf("said %q, want the fault", line)
	}
	// All but its last: a file all settled goes to the housekeeper.
	settled := first.written - 1
	s.Settle(int(settled), false)
	b, err := os.ReadFile(first.path)
	if err != nil {
		t.Fatal(err)
	}
	if got := order.Uint64(b[offSettled:]); got != settled {
		t.Errorf("the cut file's head counts %d settled, want %d: a later process sends %d again", got, settled, settled-got)
	}
	for len(said) > 0 {
		if line := <-said; strings.Contains(line, "fault in the mapped file") {
			t.Errorf("the fault told again: %q", line)
		}
	}
}

// plant leaves in dir a file of one unsent record, as uid would have:
// another user's, when uid is not this process's.
func plant(t *testing.T, dir string, uid int) string {
	t.Helper()
	src := t.TempDir()
	s := openTest(t, src, func(c *Config) {
		c.Resource = otlpwire.NewResource([]attribute.KeyValue{attribute.String("service.name", "planted-by-nobody")}, "")
	})
	s.Append(0, encoded("planted"))
	s.Close(context.Background())
	files := segFiles(t, src)
	if len(files) != 1 {
		t.Fatalf("files %v", files)
	}
	path := filepath.Join(dir, filepath.Base(files[0]))
	if err := os.Rename(files[0], path); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(path, uid, uid); err != nil {
		t.Fatal(err)
	}
	return path
}

// nobody is a uid that is not this process's effective one.
func nobody(t *testing.T) int {
	if os.Geteuid() == 65534 {
		return 65533
	}
	if os.Geteuid() != 0 {
		t.Skip("chown to another user needs root")
	}
	return 65534
}

// A directory another user owns, or that its group or others may write
// in, is refused, as ssh refuses such files, by the spool (which steps
// aside, and says which) and by the shipper (which takes nothing from
// it): a file planted there is not sent as this process's.
func TestUnsafeDirRefused(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		edit       func(dir string) error
	}{
		{"foreign owner", "is owned by uid 65534, not by this process's effective uid", func(dir string) error { return os.Chown(dir, 65534, 65534) }},
		{"world-writable", "is writable by its group or others (mode 0777)", func(dir string) error { return os.Chmod(dir, 0o777) }},
		{"group-writable", "is writable by its group or others (mode 0770)", func(dir string) error { return os.Chmod(dir, 0o770) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			uid := nobody(t)
			dir := t.TempDir()
			planted := plant(t, dir, uid)
			if err := tc.edit(dir); err != nil {
				t.Fatal(err)
			}
			s, err := Open(Config{Dir: dir, SegmentBytes: testSegment})
			t.Cleanup(func() { s.Close(context.Background()) }) // a spool that stepped aside, as Open says
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), dir) {
				t.Errorf("Open: %v; want %q", err, tc.want)
			}
			s.AddScope(0, otlpwire.Scope{})
			if v := s.Append(0, encoded("x")); v != pipeline.Unjournaled {
				t.Errorf("verdict %d in a refused directory, want unjournaled", v)
			}
			var r received
			sh := shipAll(t, dir, &r, true)
			if err := sh.Err(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("shipper: %v; want %q", err, tc.want)
			}
			if got := r.sorted(); len(got) != 0 {
				t.Errorf("shipped %v from a refused directory", got)
			}
			if _, err := os.Stat(planted); err != nil {
				t.Errorf("the planted file: %v; want it left as it is", err)
			}
		})
	}
}

// In a sound directory, the shipper takes only this user's files: one
// another user left there is not sent, nor removed.
func TestShipTakesOnlyOwnFiles(t *testing.T) {
	dir := t.TempDir()
	planted := plant(t, dir, nobody(t))
	oneRecordLeft(t, dir)
	var r received
	shipAll(t, dir, &r, true)
	if got := r.sorted(); len(got) != 1 || got[0] != "writer/a/line" {
		t.Errorf("shipped %v, want this user's line only", got)
	}
	if _, err := os.Stat(planted); err != nil {
		t.Errorf("the other user's file: %v; want it left as it is", err)
	}
}

// A file swapped for a symbolic link between the shipper's listing and its
// open is not followed: what the link points to is neither sent nor
// written.
func TestShipFileSwappedForSymlink(t *testing.T) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	target := oneRecordLeft(t, elsewhere)[0]
	name := filepath.Base(oneRecordLeft(t, dir)[0])
	old := listDir
	t.Cleanup(func() { listDir = old })
	listDir = func(d string) ([]os.DirEntry, error) {
		entries, err := old(d)
		path := filepath.Join(d, name)
		if err := os.Remove(path); err != nil {
			t.Error(err)
		}
		if err := os.Symlink(target, path); err != nil {
			t.Error(err)
		}
		return entries, err
	}
	before, err := os.ReadFile(target)
	if err != nil {
		t.Fatal(err)
	}
	var r received
	shipAll(t, dir, &r, true)
	if got := r.sorted(); len(got) != 0 {
		t.Errorf("shipped %v through a symbolic link", got)
	}
	if after, err := os.ReadFile(target); err != nil || string(after) != string(before) {
		t.Errorf("the link's target: %v, changed %v; want it untouched", err, string(after) != string(before))
	}
}

// Two spools of one process opened in the same clock tick (a coarse
// clock, forced here) name their files apart, and each keeps its records.
func TestSpoolsOpenedInOneTickKeepTheirFiles(t *testing.T) {
	old := clock
	t.Cleanup(func() { clock = old })
	tick := time.Now()
	clock = func() time.Time { return tick }
	dir := t.TempDir()
	a := openTest(t, dir, nil)
	b := openTest(t, dir, nil)
	if a.Prefix() == b.Prefix() {
		t.Errorf("both spools name their files %q", a.Prefix())
	}
	a.Append(0, encoded("from a"))
	b.Append(0, encoded("from b"))
	b.Close(context.Background())
	a.Close(context.Background())
	var r received
	shipAll(t, dir, &r, true)
	if got := r.sorted(); !slices.Equal(got, []string{"writer/a/from a", "writer/a/from b"}) {
		t.Errorf("shipped %v, want both spools' records", got)
	}
}

// A file is never made under the name of one that exists: whatever made
// two spools choose it, making the second fails, and the first is kept.
func TestFileNeverTakesAnothersName(t *testing.T) {
	dir := t.TempDir()
	kept := oneRecordLeft(t, dir)[0]
	before, err := os.ReadFile(kept)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := parseName(filepath.Base(kept))
	seg, err := makeSegment(dir, filepath.Base(kept), testSegment, n.pid, n.created, nil)
	if !errors.Is(err, syscall.EEXIST) {
		t.Errorf("made over another file: %v; want EEXIST", err)
	}
	if seg != nil {
		seg.close(false)
	}
	if after, err := os.ReadFile(kept); err != nil || string(after) != string(before) {
		t.Errorf("the file that had the name: %v, changed %v", err, string(after) != string(before))
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) != 0 {
		t.Errorf("left %v", left)
	}
}

// A spool whose first file's name is taken (a process of the same id, in
// another pid namespace, started in the same tick) starts again under
// another name, and leaves the other's file as it is.
func TestOpenTakesAnotherStartWhenItsNameIsTaken(t *testing.T) {
	old := clock
	t.Cleanup(func() { clock = old })
	tick := time.Now().Add(time.Hour) // later than any start this process took
	clock = func() time.Time { return tick }
	dir := t.TempDir()
	taken := filepath.Join(dir, segName(fmt.Sprintf("%d-%d-", os.Getpid(), tick.UnixNano()), 1))
	if err := os.WriteFile(taken, []byte("another's"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := openTest(t, dir, nil)
	defer s.Close(context.Background())
	if want := fmt.Sprintf("%d-%d-", os.Getpid(), tick.UnixNano()+1); s.Prefix() != want {
		t.Errorf("prefix %q, want %q", s.Prefix(), want)
	}
	if b, err := os.ReadFile(taken); err != nil || string(b) != "another's" {
		t.Errorf("the other's file: %q, %v", b, err)
	}
}

// "Stepped aside" and "writing again" reach a slow writer in the order
// they happened: lines are told one after the other, not each from its
// own goroutine.
func TestLinesToldInOrder(t *testing.T) {
	defer func(d time.Duration) { retryInterval = d }(retryInterval)
	retryInterval = 20 * time.Millisecond
	var mu sync.Mutex
	var said []string
	s := openTest(t, t.TempDir(), func(c *Config) {
		c.Say = func(l string) {
			if strings.Contains(l, "stepped aside") {
				time.Sleep(50 * time.Millisecond) // a slow writer
			}
			mu.Lock()
			said = append(said, l)
			mu.Unlock()
		}
	})
	defer s.Close(context.Background())
	waitFor(t, func() bool { return s.spareReady.Load() })
	s.stepAside(errors.New("a test"))
	for s.Append(0, encoded("x")) != pipeline.Journaled {
		time.Sleep(time.Millisecond)
	}
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(said) == 2 })
	if !strings.Contains(said[0], "stepped aside") || !strings.Contains(said[1], "writing again") {
		t.Errorf("told %q: want stepped aside, then writing again", said)
	}
}

// A writer that does not keep up loses lines past maxTold waiting, and is
// told how many, after the last.
func TestTellerBound(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	var said []string
	tl := teller{say: func(l string) {
		<-release
		mu.Lock()
		said = append(said, l)
		mu.Unlock()
	}}
	tl.tell("0")
	waitFor(t, func() bool { tl.mu.Lock(); defer tl.mu.Unlock(); return len(tl.lines) == 0 }) // being told
	for i := 1; i < maxTold+11; i++ {                                                         // maxTold wait, 10 are dropped
		tl.tell(fmt.Sprint(i))
	}
	close(release)
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(said) == maxTold+1 })
	tl.tell("after")
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(said) == maxTold+2 })
	if last := said[maxTold]; last != fmt.Sprintf("%d (and 10 lines of the spool before it were dropped: the writer did not keep up)", maxTold) || said[maxTold+1] != "after" {
		t.Errorf("told %q", said[maxTold-1:])
	}
}

// With WithSpoolSync, a logging call that makes a file does not fsync the
// directory, which on a busy disk takes a tenth of a second and more: the
// housekeeper does, at its sync tick. Here the directory's fsync never
// returns, and 20,000 records across many files are journaled all the same.
func TestLoggingCallNeverSyncsTheDirectory(t *testing.T) {
	old := syncDir
	t.Cleanup(func() { syncDir = old })
	s := openTest(t, t.TempDir(), func(c *Config) { c.Sync = time.Hour })
	stalled := make(chan struct{})
	syncDir = func(string) { <-stalled }
	done := make(chan error)
	go func() {
		for i := range 20000 {
			if v := s.Append(0, encoded(fmt.Sprintf("line %d", i))); v != pipeline.Journaled {
				done <- fmt.Errorf("record %d: verdict %d", i, v)
				return
			}
		}
		done <- nil
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Error(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a logging call waits on the directory's fsync")
	}
	close(stalled)
	s.Close(context.Background())
}
