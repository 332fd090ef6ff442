package spool

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/zaplens/zaplens/internal/childproc"
	"github.com/zaplens/zaplens/internal/pipeline"
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
// directory the parent gives, its collector down for good, which logs
// cutLines records and waits for its SIGKILL.
func TestCutChild(t *testing.T) {
	dir := os.Getenv(cutChildEnv)
	if dir == "" {
		t.Skip("a child of the cut tests")
	}
	o := &outage{up: make(chan struct{})}
	p, _ := spooledPipelineIn(t, dir, o, 64<<10, func(l string) { fmt.Fprintln(os.Stderr, l) })
	for i := range cutLines {
		p.Enqueue(0, encoded(cutLine(i)), false)
	}
	fmt.Println("logged")
	select {} // until SIGKILL
}

// cutOldest cuts the oldest spool file in dir to the page in its middle,
// as the fault harness does, and returns its name.
func cutOldest(t *testing.T, dir string) string {
	t.Helper()
	files := segFiles(t, dir)
	if len(files) < 2 {
		t.Fatalf("files %v: want several", files)
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

// A process killed after its oldest file was cut in the middle: the next
// process finds fewer records in it than its header counts, and counts and
// tells those as lost, the exact number that never arrives.
func TestCutFileKilledLossTold(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCutChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), cutChildEnv+"="+dir)
	stderr := &lineSaid{}
	cmd.Stderr = stderr
	c := childproc.Start(t, cmd, func(problem string) string { return problem + "; stderr:\n" + stderr.all() })
	c.Expect("logged")
	name := cutOldest(t, dir)
	_ = c.Cmd.Process.Kill()
	_ = c.Cmd.Wait()

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
	waitFor(t, func() bool { return strings.Contains(said.all(), "are lost") })
	if want := fmt.Sprintf("%s failed under this process (", name); !strings.Contains(said.all(), want) ||
		!strings.Contains(said.all(), fmt.Sprintf(": %d log records whose only copy it held are lost", lost)) {
		t.Errorf("said:\n%s\nwant a line on %s with the %d lost", said.all(), name, lost)
	}
	if n := strings.Count(said.all(), "are lost"); n != 1 {
		t.Errorf("the loss told %d times, want once:\n%s", n, said.all())
	}
	ctx := context.Background()
	_ = p.Shutdown(ctx)
	p.CloseJournal(ctx)
	if sh := shipAll(t, dir, &received{}, true); sh.Counts().Lost != 0 || sh.Counts().Found != 0 {
		t.Errorf("a later process counts %+v in the files: counted twice", sh.Counts())
	}
}
