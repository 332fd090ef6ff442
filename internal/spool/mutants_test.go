package spool

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/zaplens/zaplens/internal/otlpwire"
	"github.com/zaplens/zaplens/internal/pipeline"
)

// Where a one-character mistake in the spool's sizes, names and counts
// would pass the other tests (internal/spool/MUTANTS.md): a file's room to
// its last byte, the largest record a file takes, the order of the names
// of files taken again, the count of unprotected records told.

// recordOfFrame is an encoded record whose frame takes exactly size
// bytes, and its body.
func recordOfFrame(t *testing.T, size int) (rec []byte, body string) {
	t.Helper()
	// The encoding grows by a byte a byte of body, and a few at the
	// lengths' varint steps: start a little short of the size.
	for k := max(0, size-frameSize(len(encoded("")))-16); k < size; k++ {
		body = strings.Repeat("x", k)
		if rec = encoded(body); frameSize(len(rec)) == size {
			return rec, body
		} else if frameSize(len(rec)) > size {
			break
		}
	}
	t.Fatalf("no record takes a frame of %d bytes", size)
	return nil, ""
}

// A spool of two files takes what two files hold, to the last byte: a
// record that fits the room left in a file goes in it, and only the one
// after finds the spool at its bound. Every record comes back, once.
func TestFilesFilledToTheLastByte(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, func(c *Config) { c.MaxBytes = 2 * testSegment })
	const smallBody = "a record of an ordinary size, to fill most of a file"
	small := encoded(smallBody)
	var want []string
	appendOne := func(rec []byte, body string) pipeline.Verdict {
		v := s.Append(0, rec)
		if v == pipeline.Journaled {
			want = append(want, "writer/a/"+body)
		}
		return v
	}
	for file := range 2 {
		for first := true; first || len(s.active.mem)-s.active.off > 4*frameSize(len(small)); first = false {
			if v := appendOne(small, smallBody); v != pipeline.Journaled {
				t.Fatalf("file %d, record %d: verdict %d", file, len(want), v)
			}
		}
		seg := s.active
		closer, body := recordOfFrame(t, len(seg.mem)-seg.off)
		if v := appendOne(closer, body); v != pipeline.Journaled {
			t.Fatalf("file %d: the record that fills it to its last byte: verdict %d", file, v)
		}
		if s.active != seg || seg.off != len(seg.mem) {
			t.Fatalf("file %d: the record that fits its room went elsewhere", file)
		}
	}
	if v := s.Append(0, small); v != pipeline.JournalFull {
		t.Errorf("both files full: verdict %d, want the bound", v)
	}
	s.Close(context.Background())
	if s.Kept() != uint64(len(want)) {
		t.Errorf("kept %d, want the %d journaled", s.Kept(), len(want))
	}
	var r received
	shipAll(t, dir, &r, true)
	slices.Sort(want)
	if got := r.sorted(); !slices.Equal(got, want) {
		t.Errorf("shipped %d records, want the %d journaled, once each", len(got), len(want))
	}
}

// The largest record a file takes (with the resource's and its scope's
// frames) is journaled, whole, in the active file when it is empty and in
// the next when it is not; one four bytes larger, a frame's step, goes on
// unprotected, and is told.
func TestLargestRecordAFileTakes(t *testing.T) {
	for _, c := range []struct {
		name        string
		after, over bool
	}{{"in an empty file", false, false}, {"after a record", true, false}, {"a step larger", true, true}} {
		dir := t.TempDir()
		var said sayings
		s := openTest(t, dir, func(c *Config) { c.Say = said.say })
		room := s.cfg.SegmentBytes - headerSize - frameSize(len(s.resource)) - frameSize(len(s.scopes[0]))
		if c.over {
			room += 4
		}
		var want []string
		if c.after {
			if v := s.Append(0, encoded("before")); v != pipeline.Journaled {
				t.Fatalf("%s: the record before: verdict %d", c.name, v)
			}
			want = append(want, "writer/a/before")
		}
		rec, body := recordOfFrame(t, room)
		verdict := pipeline.Journaled
		if c.over {
			verdict = pipeline.Unjournaled
		} else {
			want = append(want, "writer/a/"+body)
		}
		if v := s.Append(0, rec); v != verdict {
			t.Errorf("%s: a record whose frame takes %d bytes of a file's %d: verdict %d, want %d", c.name, room, s.cfg.SegmentBytes, v, verdict)
		}
		s.Close(context.Background())
		var r received
		shipAll(t, dir, &r, true)
		if got := r.sorted(); !slices.Equal(got, want) {
			t.Errorf("%s: shipped %d records, want %d", c.name, len(got), len(want))
		}
		if c.over {
			waitFor(t, func() bool { return said.all() != "" })
		}
		if told := strings.Contains(said.all(), "larger than a spool file"); told != c.over {
			t.Errorf("%s: told %q", c.name, said.all())
		}
	}
}

// A file emptied for a new turn takes a name after every name the spool
// gave before: names sort in the order the files were made or emptied,
// for whoever lists the directory, and none is given twice. (A later
// process sends them in the order of their first records, which the
// headers give: see TestShipSendsInTheOrderLogged.)
func TestReusedFilesNamedInOrder(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, nil)
	defer s.Close(context.Background())
	var names []string
	reused := 0
	made := map[*segment]bool{}
	for _, seg := range s.segs {
		made[seg] = true
	}
	for len(names) < 12 {
		active := s.active
		if v := s.Append(0, encoded(fmt.Sprintf("line %d", len(names)))); v != pipeline.Journaled {
			t.Fatalf("verdict %d", v)
		}
		s.Settle(1, false)
		if s.active != active {
			names = append(names, filepath.Base(s.active.path))
			if made[s.active] {
				reused++
			}
			made[s.active] = true
		}
	}
	if reused == 0 {
		t.Fatal("no file was taken again: the test wants some")
	}
	if !slices.IsSorted(names) || len(slices.Compact(slices.Clone(names))) != len(names) {
		t.Errorf("files in the order they took over: %v, want names that sort in that order, each once", names)
	}
}

// The line that tells the spool writes again counts the records that went
// unprotected meanwhile: those the pipeline counts in Stats.Unprotected.
func TestWritingAgainCountsUnprotected(t *testing.T) {
	defer func(d time.Duration) { retryInterval = d }(retryInterval)
	retryInterval = 20 * time.Millisecond
	parent := filepath.Join(t.TempDir(), "parent")
	if err := os.WriteFile(parent, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var said sayings
	s, _ := Open(Config{Dir: filepath.Join(parent, "spool"), SegmentBytes: testSegment, Say: said.say})
	defer s.Close(context.Background())
	s.AddScope(0, otlpwire.Scope{})
	unprotected := 0
	for range 3 {
		if s.Append(0, encoded("x")) == pipeline.Unjournaled {
			unprotected++
		}
	}
	os.Remove(parent)
	deadline := time.Now().Add(5 * time.Second)
	for s.Append(0, encoded("y")) != pipeline.Journaled {
		unprotected++
		if time.Now().After(deadline) {
			t.Fatal("the spool did not come back")
		}
		time.Sleep(5 * time.Millisecond)
	}
	waitFor(t, func() bool { return strings.Contains(said.all(), "writing again") })
	if want := fmt.Sprintf("(%d went unprotected since the start)", unprotected); !strings.Contains(said.all(), want) {
		t.Errorf("told %q, want %q", said.all(), want)
	}
}

// Replay goes through the records the spool was given and no further:
// asked for more than there are, it stops at the last, and counts none
// missing that never came.
func TestReplayStopsAtTheLastRecord(t *testing.T) {
	s := openTest(t, t.TempDir(), nil)
	defer s.Close(context.Background())
	for i := range 3 {
		s.Append(0, encoded(fmt.Sprintf("line %d", i)))
	}
	req := new(otlpwire.Request)
	req.Reset(otlpwire.Resource{}, []otlpwire.Scope{{}, {}}, 1<<20)
	if n, missing := s.Replay(1, req, 10); n != 2 || missing != 0 || req.Len() != 2 {
		t.Errorf("replay from 1 of 3 records: went through %d, %d missing, %d read; want 2, 0, 2", n, missing, req.Len())
	}
}

// A file cut under the process faults when its records are read back:
// they are counted missing, now and at every later call, so that the
// pipeline settles them and goes on, rather than wait on them for good.
func TestCutFileReadBackCountsMissing(t *testing.T) {
	s := openTest(t, t.TempDir(), nil)
	defer s.Close(context.Background())
	for i := range 10 {
		s.Append(0, encoded(fmt.Sprintf("line %d", i)))
	}
	if err := os.Truncate(s.active.path, 0); err != nil {
		t.Fatal(err)
	}
	for try := range 2 {
		req := new(otlpwire.Request)
		req.Reset(otlpwire.Resource{}, []otlpwire.Scope{{}, {}}, 1<<20)
		if n, missing := s.Replay(0, req, 10); n != 10 || missing != 10 || req.Len() != 0 {
			t.Errorf("read back %d: went through %d, %d missing, %d read; want 10, 10, 0", try+1, n, missing, req.Len())
		}
	}
}

// A file that could not be made gives its place under the bound back:
// once the disk takes files again, the spool comes back and holds as many
// files as its bound, not fewer for each that failed.
func TestFailedFilesGiveTheirPlaceBack(t *testing.T) {
	defer func(d time.Duration) { retryInterval = d }(retryInterval)
	retryInterval = 20 * time.Millisecond
	old := makeFile
	t.Cleanup(func() { makeFile = old })
	var failures atomic.Int32
	makeFile = func(dir, name string, size, pid int, created int64, res []byte) (*segment, error) {
		if failures.Add(1) <= 2 {
			return nil, syscall.ENOSPC
		}
		return old(dir, name, size, pid, created, res)
	}
	dir := t.TempDir()
	cfg := Config{Dir: dir, SegmentBytes: testSegment, MaxBytes: 4 * testSegment}
	s, err := Open(cfg)
	if err == nil {
		t.Fatal("the first file was made: the test wants it to fail")
	}
	defer s.Close(context.Background())
	s.AddScope(0, otlpwire.Scope{})
	deadline := time.Now().Add(5 * time.Second)
	for s.Append(0, encoded("back")) != pipeline.Journaled {
		if time.Now().After(deadline) {
			t.Fatal("the spool did not come back once files could be made")
		}
		time.Sleep(5 * time.Millisecond)
	}
	for i := 0; ; i++ {
		v := s.Append(0, encoded(fmt.Sprintf("line %d", i)))
		if v == pipeline.JournalFull {
			break
		}
		if v != pipeline.Journaled {
			time.Sleep(time.Millisecond) // the housekeeper makes the next
		}
	}
	if n := len(segFiles(t, dir)); n != 4 {
		t.Errorf("at the bound: %d files, want the 4 of MaxBytes", n)
	}
}

// After a burst is settled the spool keeps two empty files ready, and
// removes the others: an idle process holds little disk. In a steady run
// the settled files are emptied and taken again, not new ones made.
func TestSparesAfterABurstAndInASteadyRun(t *testing.T) {
	old := makeFile
	t.Cleanup(func() { makeFile = old })
	var made atomic.Int32
	makeFile = func(dir, name string, size, pid int, created int64, res []byte) (*segment, error) {
		made.Add(1)
		return old(dir, name, size, pid, created, res)
	}
	dir := t.TempDir()
	s := openTest(t, dir, nil)
	defer s.Close(context.Background())
	written := 0
	for len(s.segs) < 6 {
		if v := s.Append(0, encoded(fmt.Sprintf("burst %d", written))); v != pipeline.Journaled {
			t.Fatalf("record %d: verdict %d", written, v)
		}
		written++
	}
	spares := func() int { s.hmu.Lock(); defer s.hmu.Unlock(); return len(s.spares) }
	waitFor(t, func() bool { return spares() > 0 })
	s.Settle(written, false)
	waitFor(t, func() bool { return len(segFiles(t, dir)) <= 1+maxSpares })
	time.Sleep(50 * time.Millisecond) // a housekeeper that kept more would have by now
	if n := len(segFiles(t, dir)); n != 1+maxSpares {
		t.Errorf("%d files after the burst was settled, want the active one and %d spares", n, maxSpares)
	}
	before := made.Load()
	fillAndSettle(t, s, 20)
	// A housekeeper late at emptying a file (a starved CPU) may have the
	// logging call make one now and then; not one a file.
	if n := made.Load() - before; n > 3 {
		t.Errorf("a steady run through 20 files made %d new ones, want them emptied and taken again", n)
	}
}
