package spool

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/zaplens/zaplens/internal/pipeline"
)

// A later process sends what processes that ended left in the order it was
// logged: the processes by their start, and one process's files by their
// records, though a file takes its name before it is filled. Here the
// spare made ahead and a settled file emptied after it wait together, and
// the later name is filled first.
func TestShipSendsInTheOrderLogged(t *testing.T) {
	dir := t.TempDir()
	var want []string
	logged := 0
	line := func(s *Spool) {
		body := fmt.Sprintf("line %05d", logged)
		logged++
		if v := s.Append(0, encoded(body)); v != pipeline.Journaled {
			t.Fatalf("%s: verdict %d", body, v)
		}
		want = append(want, "writer/a/"+body)
	}
	fill := func(s *Spool) { // to the next file
		for active := s.active; s.active == active; {
			line(s)
		}
	}
	spares := func(s *Spool) int { s.hmu.Lock(); defer s.hmu.Unlock(); return len(s.spares) }

	older := openTest(t, dir, nil)
	fill(older)
	waitFor(t, func() bool { return spares(older) == 1 }) // made ahead, after the file now filled
	settled := older.segs[0].written
	older.Settle(int(settled), false) // the first file's: it is emptied, a spare named after the other
	want = want[settled:]
	waitFor(t, func() bool { return spares(older) == 2 })
	var names []string
	for range 3 {
		names = append(names, filepath.Base(older.active.path))
		fill(older)
	}
	older.Close(context.Background())
	if slices.IsSorted(names) {
		t.Fatalf("files filled in the order of their names, %v: the test wants one filled before a name that sorts before it", names)
	}

	newer := openTest(t, dir, nil)
	for range 20 {
		line(newer)
	}
	newer.Close(context.Background())

	r := &received{}
	shipAll(t, dir, r, true)
	inOrderLogged(t, r, want, fmt.Sprint("files filled in the order ", names))
}

// inOrderLogged fails unless r received want, in its order.
func inOrderLogged(t *testing.T, r *received, want []string, context string) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if slices.Equal(r.lines, want) {
		return
	}
	at := 0
	for at < min(len(r.lines), len(want)) && r.lines[at] == want[at] {
		at++
	}
	got := "nothing"
	if at < len(r.lines) {
		got = fmt.Sprintf("%.30q", r.lines[at])
	}
	t.Errorf("received %d lines, want %d in the order logged: at %d, %s; %s", len(r.lines), len(want), at, got, context)
}
