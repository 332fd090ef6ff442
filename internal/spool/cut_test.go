package spool

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"go.opentelemetry.io/otel/attribute"

	"github.com/zaplens/zaplens/internal/otlpwire"
	"github.com/zaplens/zaplens/internal/pipeline"
	"github.com/zaplens/zaplens/internal/testsupport/childproc"
)

// A spool file cut in its middle under a live process (the fault harness's
// round 12 at 0cdb92c): the queue had spilled whole, so the pages past the
// cut held the only copy of their records. Nobody can send them again; the
// process that finds the file must say how many went.

const cutChildEnv = "ZAPLENS_SPOOL_CUT_CHILD"

// cutLines is what the cut children log: enough for several files.
const cutLines = 2000

func cutLine(i int) string { return fmt.Sprintf("line %05d %s", i, strings.Repeat("x", 100)) }

// TestCutChild is the child's side: a pipeline journaled by a spool on the
// directory the parent gives, its collector down for good, with a queue of
// the bytes it gives, which logs lines as the parent says ("log N") until
// its SIGKILL.
func TestCutChild(t *testing.T) {
	dir := os.Getenv(cutChildEnv)
	if dir == "" {
		t.Skip("a child of the cut tests")
	}
	queue, _ := strconv.Atoi(os.Getenv(cutChildEnv + "_QUEUE"))
	lookInterval = 20 * time.Millisecond
	o := &outage{up: make(chan struct{})}
	p, _ := spooledPipelineIn(t, dir, o, queue, func(l string) { fmt.Fprintln(os.Stderr, l) })
	sc := bufio.NewScanner(os.Stdin)
	for i := 0; sc.Scan(); {
		n, _ := strconv.Atoi(strings.TrimPrefix(sc.Text(), "log "))
		for end := i + n; i < end; i++ {
			p.Enqueue(0, encoded(cutLine(i)), false)
		}
		fmt.Println("logged")
	}
	select {} // until SIGKILL
}

// cutChild starts a cut child on dir with a queue of queue bytes.
func cutChild(t *testing.T, dir string, queue int) (*childproc.Proc, *lineSaid) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCutChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), cutChildEnv+"="+dir, fmt.Sprint(cutChildEnv, "_QUEUE=", queue))
	stderr := &lineSaid{}
	cmd.Stderr = stderr
	return childproc.Start(t, cmd, func(problem string) string { return problem + "; stderr:\n" + stderr.all() }), stderr
}

// logged has c log n lines and waits until it has.
func logged(c *childproc.Proc, n int) {
	c.Send(fmt.Sprint("log ", n))
	c.Expect("logged")
}

// cutOldest cuts the oldest spool file in dir to the page in its middle,
// as the fault harness does, and returns its name.
func cutOldest(t *testing.T, dir string) string {
	t.Helper()
	files := segFiles(t, dir)
	if len(files) == 0 {
		t.Fatal("no spool file")
	}
	slices.Sort(files)
	if err := os.Truncate(files[0], testSegment/2); err != nil {
		t.Fatal(err)
	}
	return filepath.Base(files[0])
}

// distinct is how many of the cut children's lines o received, each
// counted once.
func distinct(o *received) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	seen := map[string]bool{}
	for _, l := range o.lines {
		seen[l] = true
	}
	return len(seen)
}

// lineSaid keeps the lines said, or written.
type lineSaid struct {
	mu    sync.Mutex
	lines []string
}

func (l *lineSaid) say(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, s)
}

func (l *lineSaid) Write(b []byte) (int, error) {
	l.say(string(b))
	return len(b), nil
}

func (l *lineSaid) all() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// A process killed after its oldest file was cut in the middle, the queue
// having spilled its records there: the next process finds fewer records
// in it than its header counts, and counts and tells those as lost, the
// exact number that never arrives. (Before the header's count, it said
// only "1 torn or corrupt frames skipped": the fault harness's round 12 at
// 0cdb92c, 22,795 lines lost untold.)
func TestCutFileKilledLossTold(t *testing.T) {
	dir := t.TempDir()
	c, stderr := cutChild(t, dir, 64<<10)
	logged(c, cutLines)
	name := cutOldest(t, dir)
	c.Kill()

	r := &received{}
	said := &lineSaid{}
	sh := shipAll(t, dir, r, true, func(c *ShipConfig) { c.Say = said.say })
	lost := cutLines - distinct(r)
	counts := sh.Counts()
	if lost == 0 {
		t.Fatalf("nothing lost: the cut took no record (%+v)", counts)
	}
	if counts.Lost != uint64(lost) {
		t.Errorf("%d records never arrived; the shipper counts %d lost (%+v); said:\n%s", lost, counts.Lost, counts, said.all())
	}
	if want := fmt.Sprintf("%s is cut short (%d bytes of %d): %d log records", name, testSegment/2, testSegment, lost); !strings.Contains(said.all(), want) {
		t.Errorf("said:\n%s\nwant a line with %q", said.all(), want)
	}
	t.Logf("%d of %d lost with the cut; the child said:\n%s", lost, cutLines, stderr.all())
}

// The records of a cut file that the queue still holds are journaled again
// in the next file, so that a SIGKILL after the cut loses none of them:
// the active file cut as the next record is written past the cut, and an
// older file the housekeeper finds cut.
func TestCutFileRecordsInMemoryJournaledAgain(t *testing.T) {
	for _, tc := range []struct {
		name         string
		before, more int // lines logged before the cut, and after it
	}{
		{"active", 300, 300}, // one file, the active one: the next record faults
		{"older", 600, 0},    // two files: the housekeeper finds the first cut
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			c, stderr := cutChild(t, dir, 1<<20) // the queue holds every line
			logged(c, tc.before)
			cutOldest(t, dir)
			if tc.more > 0 {
				logged(c, tc.more)
			}
			waitFor(t, func() bool { return strings.Contains(stderr.all(), "was cut to") })
			c.Kill()

			r := &received{}
			sh := shipAll(t, dir, r, true)
			if got, want := distinct(r), tc.before+tc.more; got != want || sh.Counts().Lost != 0 {
				t.Errorf("%d of %d lines arrived, %d counted lost (%+v); the child said:\n%s", got, want, sh.Counts().Lost, sh.Counts(), stderr.all())
			}
		})
	}
}

// A live process whose oldest file was cut in the middle while the
// collector was down: when the collector is back it sends every record it
// can read, counts those it cannot as failed and lost with the file (not as
// a failed export), says how many once, and leaves nothing for a later
// process to count again.
func TestCutFileLiveLossTold(t *testing.T) {
	dir := t.TempDir()
	o := &outage{up: make(chan struct{})}
	said := &lineSaid{}
	p, _ := spooledPipelineIn(t, dir, o, 64<<10, said.say)
	for i := range cutLines {
		p.Enqueue(0, encoded(cutLine(i)), false)
	}
	name := cutOldest(t, dir)
	close(o.up)
	waitFor(t, func() bool { return p.Counts().Queued == 0 })
	c := p.Counts()
	got := distinct(&o.received)
	lost := cutLines - got
	if lost == 0 || c.Exported != uint64(got) || c.Failed != uint64(lost) || c.JournalLost != uint64(lost) {
		t.Errorf("%d of %d records arrived; counts %+v: want the other %d failed, lost with the journal's file", got, cutLines, c, lost)
	}
	var obs pipeline.Observation
	p.Observe(&obs)
	if !slices.Contains(obs.FailedBy, pipeline.TypeCount{Type: pipeline.JournalLostType, N: uint64(lost)}) {
		t.Errorf("failed by %+v: want %d of type %s", obs.FailedBy, lost, pipeline.JournalLostType)
	}
	const told = "whose only copy it held are lost"
	waitFor(t, func() bool { return strings.Contains(said.all(), told) })
	if want := fmt.Sprintf("%s failed under this process (", name); !strings.Contains(said.all(), want) ||
		!strings.Contains(said.all(), fmt.Sprintf(": %d log records whose only copy it held are lost", lost)) {
		t.Errorf("said:\n%s\nwant a line on %s with the %d lost", said.all(), name, lost)
	}
	if n := strings.Count(said.all(), told); n != 1 {
		t.Errorf("the loss told %d times, want once:\n%s", n, said.all())
	}
	ctx := context.Background()
	_ = p.Shutdown(ctx)
	p.CloseJournal(ctx)
	if sh := shipAll(t, dir, &received{}, true); sh.Counts().Lost != 0 || sh.Counts().Found != 0 {
		t.Errorf("a later process counts %+v in the files: counted twice", sh.Counts())
	}
}

// At the bound, with no file to journal them again in, the records of a
// cut file that the queue still holds stay there, counted unprotected, and
// are delivered when the collector comes back: none is left to the cut
// file, to be read back missing.
func TestCutFileRecordsKeptInMemoryAtTheBound(t *testing.T) {
	defer func(d time.Duration) { lookInterval = d }(lookInterval)
	lookInterval = 10 * time.Millisecond
	dir := t.TempDir()
	o := &outage{up: make(chan struct{})}
	said := &lineSaid{}
	s := openTest(t, dir, func(c *Config) { c.MaxBytes, c.Say = 2*testSegment, said.say })
	p := pipeline.New(pipeline.Config{MaxQueueBytes: 1 << 20, MaxBatchRecords: 50, MaxRequestBytes: 1 << 20,
		ScheduleDelay: 10 * time.Millisecond, ExportTimeout: 5 * time.Second, Export: o.export, Journal: s,
		Resource: s.cfg.Resource})
	p.AddScope(otlpwire.NewScope("a", "", "", nil))
	const n = 600 // two files: the bound
	for i := range n {
		p.Enqueue(0, encoded(cutLine(i)), false)
	}
	cutOldest(t, dir)
	waitFor(t, func() bool { return strings.Contains(said.all(), "was cut to") })
	close(o.up)
	waitFor(t, func() bool { return p.Counts().Queued == 0 })
	ctx := context.Background()
	_ = p.Shutdown(ctx)
	p.CloseJournal(ctx)
	if c, got := p.Counts(), distinct(&o.received); got != n || c.Failed != 0 || c.Unprotected == 0 {
		t.Errorf("%d of %d arrived; counts %+v: want all, those of the cut file in memory unprotected; said:\n%s", got, n, c, said.all())
	}
}

// A file cut under the process is never taken again once its records are
// settled: emptied and renamed, it would fault again past the cut as the
// active file, and the cut be told again (twice in a run of the fault
// harness at 9fe867d, "stepped aside" and "writing again" each printed
// twice). Nor does the spool step aside for a cut: the next file takes
// over.
func TestCutFileNeverTakenAgain(t *testing.T) {
	said := &lineSaid{}
	s := openTest(t, t.TempDir(), func(c *Config) { c.MaxBytes, c.Say = 4*testSegment, said.say })
	defer s.Close(context.Background())
	waitFor(t, func() bool { return s.spareReady.Load() })
	first := s.active
	n := 0
	for ; n < 50; n++ {
		s.Append(0, encoded(cutLine(n)))
	}
	if err := os.Truncate(first.path, testSegment/2); err != nil {
		t.Fatal(err)
	}
	for ; s.active == first || s.active == nil; n++ { // the write past the cut faults
		if v := s.Append(0, encoded(cutLine(n))); v != pipeline.Journaled {
			t.Fatalf("record %d: verdict %d", n, v)
		}
	}
	s.Settle(n, false)
	fillAndSettle(t, s, 12) // three times the bound
	if c := strings.Count(said.all(), "was cut to"); c != 1 || strings.Contains(said.all(), "stepped aside") {
		t.Errorf("the cut told %d times, want once, and no stepping aside:\n%s", c, said.all())
	}
}

// cutAfterReplay is a spool whose oldest file is cut to its first page
// right after the next Replay once armed: between the spool's read and
// the exporter's copy of the request.
type cutAfterReplay struct {
	*Spool
	t     *testing.T
	armed atomic.Bool
	cut   atomic.Bool
}

func (j *cutAfterReplay) Replay(from uint64, req *otlpwire.Request, max int) (n, missing int) {
	n, missing = j.Spool.Replay(from, req, max)
	if j.armed.CompareAndSwap(true, false) {
		files := segFiles(j.t, j.cfg.Dir)
		slices.Sort(files)
		if err := os.Truncate(files[0], int64(pageSize)); err != nil {
			j.t.Error(err)
		}
		j.cut.Store(true)
	}
	return n, missing
}

// A spool file cut between the reading back and the copy of the final
// export, Shutdown's, loses the records past the cut as the live path
// does: they are counted failed as lost with the file (SpoolLost, error
// type spool_lost), told with their number, and the records before the
// cut are delivered. (Before, the whole request was counted as an export
// that failed, of type _OTHER, and kept in the cut file, where a later
// process counted the lost ones again.)
func TestCutFileAtShutdownCountedLost(t *testing.T) {
	dir := t.TempDir()
	o := &outage{up: make(chan struct{})}
	said := &lineSaid{}
	j := &cutAfterReplay{Spool: openTest(t, dir, func(c *Config) { c.Say = said.say }), t: t}
	p := exportAtShutdown(j, o)
	const n = 300
	for i := range n {
		p.Enqueue(0, encoded(cutLine(i)), false)
	}
	if c := p.Counts(); c.Queued != n {
		t.Fatalf("counts %+v before Shutdown: the test wants its export to be the first", c)
	}
	j.armed.Store(true)
	close(o.up)
	ctx := context.Background()
	if err := p.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	p.CloseJournal(ctx)
	if !j.cut.Load() {
		t.Fatal("no file was cut")
	}
	c, got := p.Counts(), distinct(&o.received)
	lost := uint64(n - got)
	if got == 0 || lost == 0 || c.Exported != uint64(got) || c.Failed != lost || c.JournalLost != lost {
		t.Errorf("%d of %d arrived; counts %+v: want the others failed, every one lost with the file", got, n, c)
	}
	var obs pipeline.Observation
	p.Observe(&obs)
	if want := []pipeline.TypeCount{{Type: pipeline.JournalLostType, N: lost}}; !slices.Equal(obs.FailedBy, want) {
		t.Errorf("failed by %+v, want %+v", obs.FailedBy, want)
	}
	waitFor(t, func() bool { return strings.Contains(said.all(), "whose only copy it held are lost") })
	if want := fmt.Sprintf(": %d log records whose only copy it held are lost", lost); !strings.Contains(said.all(), want) {
		t.Errorf("said:\n%s\nwant %q", said.all(), want)
	}
	if sh := shipAll(t, dir, &received{}, true); sh.Counts().Found != 0 || sh.Counts().Lost != 0 {
		t.Errorf("a later process counts %+v in the files: counted twice", sh.Counts())
	}
	t.Logf("%d delivered, %d lost with the cut", got, lost)
}

// exportAtShutdown is a pipeline journaled by j that exports nothing
// before Shutdown: a batch never fills its 4 KiB queue, the schedule delay
// is an hour, and what the queue has no room for spills to j's files.
func exportAtShutdown(j pipeline.Journal, o *outage) *pipeline.Pipeline {
	p := pipeline.New(pipeline.Config{MaxQueueBytes: 4 << 10, MaxBatchRecords: 50, MaxRequestBytes: 1 << 20,
		ScheduleDelay: time.Hour, ExportTimeout: 5 * time.Second, Export: o.export, Journal: j,
		Resource: otlpwire.NewResource([]attribute.KeyValue{attribute.String("service.name", "writer")}, "")})
	p.AddScope(otlpwire.NewScope("a", "", "", nil))
	return p
}

// A page failing in the middle of a record (not a cut: the pages after it
// read) faults in every copy of the request: Replay reads every page of a
// record, so that the final export finds it missing once and goes on,
// rather than reading it back again for ever. Only that record is lost:
// the file is not cut, and the records after it, on pages that read, are
// delivered (before, every record after it in the file was counted lost,
// and the file removed).
func TestPageFailingInARecordAtShutdown(t *testing.T) {
	const n, big = 100, 10
	lines := make([]string, n)
	for i := range lines {
		lines[i] = cutLine(i)
	}
	lines[big] += strings.Repeat("y", 3*pageSize)
	obs, _, seg := failPageAtShutdown(t, lines, func(seg *segment) int {
		return (payloadAt(seg, big) + 2*pageSize - 1) &^ (pageSize - 1) // a page inside the payload, not its last
	})
	c := obs.Counts
	if c.JournalLost != 1 || c.Failed != 1 || c.Exported != n-1 || !slices.Equal(obs.FailedBy, []pipeline.TypeCount{{Type: pipeline.JournalLostType, N: 1}}) {
		t.Errorf("counts %+v, failed by %+v: want the record on the failing page lost with the file, the others delivered", c, obs.FailedBy)
	}
	if seg.unreadable {
		t.Error("the file was not read past the failing page")
	}
}

// A page failing under frames' heads (not a cut) hides where every frame
// after it starts: the records on disk only from the first on that page on
// are lost, counted once, the file read back no further, not faulting on
// each; those before it, and those the queue held, are delivered.
func TestPageFailingUnderFramesAtShutdown(t *testing.T) {
	const n = 300
	lines := make([]string, n)
	for i := range lines {
		lines[i] = cutLine(i)
	}
	var first uint64 // the first record with bytes on the page
	obs, o, seg := failPageAtShutdown(t, lines, func(seg *segment) int {
		page := payloadAt(seg, n/2) &^ (pageSize - 1)
		for {
			if _, payload := seg.record(first); payloadAt(seg, first)+len(payload) > page {
				return page
			}
			first++
		}
	})
	got := map[string]bool{}
	for _, l := range o.lines {
		got[l] = true
	}
	var missed []uint64
	for i, l := range lines {
		if !got["writer/a/"+l] {
			missed = append(missed, uint64(i))
		}
	}
	c := obs.Counts
	run := len(missed) > 0 && missed[0] == first && missed[len(missed)-1] == first+uint64(len(missed))-1
	if lost := uint64(len(missed)); !run || c.JournalLost != lost || c.Failed != lost || c.Exported != n-lost ||
		!slices.Equal(obs.FailedBy, []pipeline.TypeCount{{Type: pipeline.JournalLostType, N: lost}}) {
		t.Errorf("counts %+v, failed by %+v, records missed %v: want those on disk only from %d, the first on the failing page, on lost with the file, the others delivered", c, obs.FailedBy, missed, first)
	}
	if !seg.unreadable {
		t.Error("the file was read back past a frame's head that failed")
	}
}

// failPageAtShutdown logs lines through a pipeline journaled by a fresh
// spool, whose first export is Shutdown's, makes the page of its first file
// at the offset page gives fail to read (not a cut: the pages after it
// read), and shuts down. It returns what the pipeline counted, what
// arrived, and the file.
func failPageAtShutdown(t *testing.T, lines []string, page func(*segment) int) (pipeline.Observation, *outage, *segment) {
	t.Helper()
	o := &outage{up: make(chan struct{})}
	s := openTest(t, t.TempDir(), nil)
	p := exportAtShutdown(s, o)
	for _, l := range lines {
		p.Enqueue(0, encoded(l), false)
	}
	if c := p.Counts(); c.Queued != uint64(len(lines)) {
		t.Fatalf("counts %+v before Shutdown: the test wants its export to be the first", c)
	}
	seg := s.segs[0]
	at := page(seg)
	if err := syscall.Mprotect(seg.mem[at:at+pageSize], syscall.PROT_NONE); err != nil {
		t.Fatal(err)
	}
	close(o.up)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := p.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v; counts %+v", err, p.Counts())
	}
	p.CloseJournal(ctx)
	var obs pipeline.Observation
	p.Observe(&obs)
	return obs, o, seg
}

// payloadAt is the offset in seg's file of its i-th record's payload.
func payloadAt(seg *segment, i uint64) int {
	_, payload := seg.record(i)
	return int(uintptr(unsafe.Pointer(&payload[0])) - uintptr(unsafe.Pointer(&seg.mem[0])))
}

// The records of a cut file journaled again go to a file made after the
// files that hold later records: a later process sends one process's
// files in the order of their records, not of their names, so that every
// record arrives in the order it was logged (docs/spool.md), once.
func TestCutFileJournaledAgainSentInOrder(t *testing.T) {
	dir := t.TempDir()
	c, stderr := cutChild(t, dir, 1<<20) // the queue holds every line
	const n = 600                        // two files: the housekeeper finds the first cut
	logged(c, n)
	cutOldest(t, dir)
	waitFor(t, func() bool { return strings.Contains(stderr.all(), "journaled again") })
	c.Kill()

	r := &received{}
	shipAll(t, dir, r, true)
	want := make([]string, n)
	for i := range want {
		want[i] = "writer/a/" + cutLine(i)
	}
	inOrderLogged(t, r, want, "the child said:\n"+stderr.all())
}

// The file a cut file's records are journaled again in may fail too (a
// page that cannot be written): that is told as any file's fault, and the
// file never taken again; the records it could not take stay in memory,
// counted unprotected, and are delivered. Before, its fault went untold.
func TestCutFileJournaledAgainInAFailingFile(t *testing.T) {
	dir := t.TempDir()
	o := &outage{up: make(chan struct{})}
	said := &lineSaid{}
	p, s := spooledPipelineIn(t, dir, o, 1<<20, said.say) // the queue holds every line
	n := 0
	for ; n < 300; n++ {
		p.Enqueue(0, encoded(cutLine(n)), false)
	}
	waitFor(t, func() bool { return s.spareReady.Load() })
	s.hmu.Lock()
	spare := s.spares[len(s.spares)-1]
	s.hmu.Unlock()
	// Past its first page: the header's stores are atomic, which the race
	// detector makes in C, where a fault kills the process.
	if err := syscall.Mprotect(spare.mem[pageSize:], syscall.PROT_READ); err != nil {
		t.Fatal(err)
	}
	cutOldest(t, dir)
	for ; !strings.Contains(said.all(), "was cut to"); n++ { // a write past the cut finds it
		p.Enqueue(0, encoded(cutLine(n)), false)
		time.Sleep(time.Millisecond)
	}
	want := fmt.Sprintf("writing %s: fault in the mapped file", spare.path)
	waitFor(t, func() bool { return strings.Contains(said.all(), want) })
	close(o.up)
	waitFor(t, func() bool { return p.Counts().Queued == 0 })
	ctx := context.Background()
	_ = p.Shutdown(ctx)
	p.CloseJournal(ctx)
	// The queue held every record past the cut: the exporter's first
	// batch, on disk only after its export failed, lies before it.
	var past uint64
	if m := regexp.MustCompile(`; (\d+) of its records not yet delivered were past the cut`).FindStringSubmatch(said.all()); m != nil {
		past, _ = strconv.ParseUint(m[1], 10, 64)
	}
	c := p.Counts()
	if c.Exported != uint64(n) || distinct(&o.received) != n || spare.written == 0 || c.Unprotected != past-spare.written {
		t.Errorf("counts %+v, %d of %d arrived, %d of %d past the cut journaled again: want every one delivered, the others past the cut unprotected; said:\n%s",
			c, distinct(&o.received), n, spare.written, past, said.all())
	}
}
