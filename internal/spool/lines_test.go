package spool

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/zaplens/zaplens/internal/pipeline"
)

// What the shipper says and leaves, where a mistake would pass unseen:
// the count's line, the refusal's line, an empty request, the files left by
// a failed pass, the count of files left unread, the size of the files.

// sayings collects the shipper's lines.
type sayings struct {
	mu    sync.Mutex
	lines []string
}

func (s *sayings) say(l string) { s.mu.Lock(); s.lines = append(s.lines, l); s.mu.Unlock() }

func (s *sayings) all() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.lines, "\n")
}

// The count's line tells the torn frames only when there are some, and
// counts files and processes in words that agree with the numbers.
func TestShipCountLine(t *testing.T) {
	for _, torn := range []bool{false, true} {
		dir := t.TempDir()
		s := openTest(t, dir, nil)
		for i := range 3 {
			s.Append(0, encoded(fmt.Sprintf("line %d", i)))
		}
		end := s.active.off
		s.Close(context.Background())
		files := segFiles(t, dir)
		if torn {
			b, _ := os.ReadFile(files[0])
			copy(b[end:], "junk")
			os.WriteFile(files[0], b, 0o600)
		}
		var said sayings
		shipAll(t, dir, &received{}, true, func(c *ShipConfig) { c.Say = said.say })
		want := "found 3 log records unsent by 1 process that ended (1 file)"
		if torn {
			want += "; 1 torn or corrupt frames skipped"
		}
		if line := said.all(); !strings.Contains(line, want) || (!torn && strings.Contains(line, "torn")) {
			t.Errorf("torn %v: said %q, want %q", torn, line, want)
		}
	}
	if got := Plural(2, "file", "files") + ", " + Plural(1, "file", "files"); got != "2 files, 1 file" {
		t.Errorf("plurals: %q", got)
	}
}

// A refusal for good is said, with its count; an error with nothing
// rejected (a warning that came with an acknowledgement) is not a refusal.
func TestShipRefusalLine(t *testing.T) {
	for _, tc := range []struct {
		rejected int
		err      error
		said     bool
	}{{1, refusal{}, true}, {0, errors.New("a warning"), false}} {
		dir := t.TempDir()
		oneRecordLeft(t, dir)
		var said sayings
		export := func(context.Context, []byte, int, bool) (int, error) { return tc.rejected, tc.err }
		sh := shipAll(t, dir, &received{}, true, func(c *ShipConfig) { c.Export, c.Say = export, said.say })
		if got := strings.Contains(said.all(), "refused"); got != tc.said || sh.Counts().Rejected != uint64(tc.rejected) {
			t.Errorf("rejected %d: said %q, counts %+v", tc.rejected, said.all(), sh.Counts())
		}
	}
}

// Records settled after a kept one, at the end of a file, make no request
// of their own: an empty request costs the collector and counts nothing.
func TestShipNoEmptyRequest(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, nil)
	for i := range 4 {
		s.Append(0, encoded(fmt.Sprintf("line %d", i)))
	}
	s.Settle(1, true)
	s.Settle(3, false) // marked, after the kept one
	s.Close(context.Background())
	var r received
	shipAll(t, dir, &r, true, func(c *ShipConfig) { c.MaxBatchRecords = 1 })
	if r.calls != 1 || len(r.sorted()) != 1 {
		t.Errorf("%d requests for %v: want one, of the kept record", r.calls, r.sorted())
	}
}

// A pass that cannot export leaves every file, each unlocked, for a later
// process.
func TestShipFailedPassLeavesFilesUnlocked(t *testing.T) {
	dir := t.TempDir()
	for range 3 {
		oneRecordLeft(t, dir)
	}
	files := segFiles(t, dir)
	shipAll(t, dir, &received{fail: 100}, true)
	var r received
	sh := shipAll(t, dir, &r, true)
	if c := sh.Counts(); c.Files != uint64(len(files)) || c.Exported != 3 || len(segFiles(t, dir)) != 0 {
		t.Errorf("counts %+v, files left %v: want the %d files taken and sent by the next shipper", c, segFiles(t, dir), len(files))
	}
}

// Of two files, the one the count cannot read is counted unread, and only
// it.
func TestShipCountsUnreadFiles(t *testing.T) {
	old := readFile
	t.Cleanup(func() { readFile = old })
	first := true // written and read by the shipper's goroutine only
	readFile = func(fd int) ([]byte, error) {
		if first {
			first = false
			return nil, errors.New("cannot map")
		}
		return old(fd)
	}
	dir := t.TempDir()
	oneRecordLeft(t, dir)
	oneRecordLeft(t, dir)
	sh := shipAll(t, dir, &received{}, true)
	if c := sh.Counts(); c.Unread != 1 || c.Files != 2 || c.Exported != 1 {
		t.Errorf("counts %+v: want one of two files unread, the other sent", c)
	}
}

// A directory that cannot be read is the shipper's error.
func TestShipMissingDirectory(t *testing.T) {
	sh := shipAll(t, filepath.Join(t.TempDir(), "none"), &received{}, true)
	if sh.Err() == nil {
		t.Error("no error")
	}
}

// Files are made at their size, not larger: the spool's bound on the disk
// is a count of files of that size. Zero takes the default size.
func TestFilesAtTheirSize(t *testing.T) {
	for _, size := range []int{testSegment, 300 << 10, 10000, 0} {
		dir := t.TempDir()
		s := openTest(t, dir, func(c *Config) { c.SegmentBytes, c.MaxBytes = size, 0 })
		want := int64(size+pageSize-1) &^ int64(pageSize-1) // whole pages
		if size == 0 {
			want = DefaultSegmentBytes
		}
		if s.maxFiles != int(DefaultMaxBytes/want) {
			t.Errorf("size %d: %d files at most, want the default bound's %d", size, s.maxFiles, DefaultMaxBytes/want)
		}
		for _, f := range segFiles(t, dir) {
			if info, err := os.Stat(f); err != nil || info.Size() != want {
				t.Errorf("%s: %v, want %d bytes", f, err, want)
			}
		}
		s.Close(context.Background())
	}
}

// A record of a scope never added is not journaled, and harms nothing.
func TestAppendUnknownScope(t *testing.T) {
	s := openTest(t, t.TempDir(), nil)
	defer s.Close(context.Background())
	for _, scope := range []int{-1, 2, 3} {
		if v := s.Append(scope, encoded("x")); v != pipeline.Unjournaled {
			t.Errorf("scope %d: verdict %d", scope, v)
		}
	}
}
