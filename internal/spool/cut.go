package spool

import (
	"fmt"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/zaplens/zaplens/internal/pipeline"
)

// A file cut under the process (truncated by another hand: the pages past
// its new end are gone) held the only copy of the records the queue had
// spilled to it. Those the queue still holds are journaled again, in the
// next file; the others are lost for anyone, and counted so: by this
// process as it reads them back (Stats.SpoolLost), or by a later one from
// the file's header (ShipCounts.Lost).

// UseMemory lets the spool read the queue, to journal again the records
// of a file cut under it that the queue still holds.
func (s *Spool) UseMemory(m pipeline.Memory) { s.memory = m }

var _ pipeline.MemoryUser = (*Spool)(nil)

// cutSize is the size of seg's file when it is shorter than its mapping,
// cut under it; -1 otherwise.
func (seg *segment) cutSize() int64 {
	var st syscall.Stat_t
	if syscall.Fstat(seg.fd, &st) != nil || st.Size >= int64(len(seg.mem)) {
		return -1
	}
	return st.Size
}

// intact is how many of seg's records lie whole in its first size bytes.
func (seg *segment) intact(size int) (n uint64) {
	end := min(size, seg.off)
	_ = guardFault(func() {
		for off := headerSize; off+frameHead <= end && n < seg.written; {
			next := off + frameSize(frameLen(seg.mem, off))
			if next > end {
				return
			}
			if isRecord(seg.mem, off) {
				n++
			}
			off = next
		}
	})
	return n
}

// noteCut marks seg, whose mapping faulted, for handleCuts when its file
// is cut, and reports whether it is.
func (s *Spool) noteCut(seg *segment) bool {
	if seg.cutDone || seg.cutSize() < 0 {
		return false
	}
	s.markCut(seg)
	return true
}

// markCut marks seg's file found cut, for handleCuts.
func (s *Spool) markCut(seg *segment) {
	seg.cutSeen.Store(true)
	s.cutSeen.Store(true)
}

// handleCuts handles the files found cut since the last call: by a fault
// in them, or by the housekeeper's look. It runs where no loop over the
// files is under way: in Append, and at the end of Settle and Replay.
func (s *Spool) handleCuts() {
	if !s.cutSeen.Load() || !s.cutSeen.Swap(false) { // a load first: this runs on every record
		return
	}
	for i := 0; i < len(s.segs); i++ { // cut inserts after i: the loop sees the new file, not cut
		if seg := s.segs[i]; seg.cutSeen.Load() && !seg.cutDone {
			s.cut(seg)
		}
	}
}

// cut ends a file cut under the process: nothing more goes in; its records
// the queue still holds are journaled again in the next file, which takes
// its place when it was the active one (else the next record rotates to a
// file); and it is released as any other once every fate is told, the
// count of what it lost told then, and removed, never taken again.
func (s *Spool) cut(seg *segment) {
	seg.cutDone = true
	size := seg.cutSize()
	if size < 0 {
		return
	}
	if seg.fault == nil {
		seg.fault = fmt.Errorf("found shorter than its mapping")
	}
	active := seg == s.active
	seg.sealed = true
	first := seg.first + seg.intact(int(size))
	end := seg.first + seg.written
	undelivered := end - max(first, seg.first+seg.decided)
	r, from := s.rejournal(seg, first, end)
	line := fmt.Sprintf("zaplens: spool %s: %s was cut to %d of %d bytes under this process (%v); the file is let go",
		s.cfg.Dir, seg.path, size, len(seg.mem), seg.fault)
	if undelivered > 0 {
		line += fmt.Sprintf("; %d of its records not yet delivered were past the cut", undelivered)
	}
	if r != nil {
		line += fmt.Sprintf("; %d of them, which the queue still held, are journaled again in %s", r.written, filepath.Base(r.path))
	}
	if from > first && undelivered > 0 {
		line += "; the others had their only copy there: those not delivered yet are counted as failed as they come to be sent, and their number told when the file's records are all settled"
	}
	s.say("%s", line)
	if active && s.active == seg {
		s.active = nil // the next record rotates to the next file: no need to step aside
	}
}

// rejournal writes the records of seg numbered from first up to end that
// the queue still holds into the next file, and returns it, nil if none
// were or no file was ready, and the number of the first record left in
// seg: the others are in the new file, and those it could not take (no
// file, or it failed) are marked bare, counted unprotected from the first
// it did not take.
func (s *Spool) rejournal(seg *segment, first, end uint64) (r *segment, from uint64) {
	from = end
	if s.memory == nil || first >= end {
		return nil, end
	}
	failed := false
	taken := first // the number after the last record journaled again
	s.memory.Queued(first, func(i uint64, scope int, rec []byte) bool {
		if i >= end {
			return false
		}
		if r == nil {
			from = i
			if r, _ = s.next(); r == nil {
				failed = true
				return false
			}
			r.setFirst(i)
		}
		if r.off+s.need(r, scope, rec) > len(r.mem) {
			failed = true
			return false
		}
		if err := s.put(r, scope, rec); err != nil {
			// Its own fault, told and kept as any file's: never taken
			// again; found cut, handleCuts's loop handles it next.
			s.faulted(r, fmt.Errorf("writing %s: %v", r.path, err))
			failed = true
			return false
		}
		r.written++
		taken = i + 1
		return true
	})
	if failed {
		s.memory.Bare(taken, end) // those it could not take stay in memory, unprotected
	}
	if r == nil {
		return nil, from
	}
	seg.written = from - seg.first
	_ = guardFault(func() { storeWritten(seg.mem, seg.written) })
	if seg == s.active && !failed {
		s.active = r
		s.segs = append(s.segs, r)
	} else {
		// Sealed: a file holds consecutive records, and the next record
		// is not the one after its last. A rotation makes the next file.
		if seg == s.active {
			s.active = nil
		}
		r.sealed = true
		s.segs = slices.Insert(s.segs, slices.Index(s.segs, seg)+1, r)
	}
	return r, from
}

// lookInterval is how often the housekeeper looks for files cut under
// the process: a cut file whose records the queue still holds is found
// within it, even when no write or read back meets the cut, so that they
// are journaled again before a crash can take them.
var lookInterval = time.Second

// lookForCuts marks the files cut under the process for handleCuts: an
// fstat a file, under hmu, so that Close does not close one meanwhile.
func (s *Spool) lookForCuts() {
	s.hmu.Lock()
	defer s.hmu.Unlock()
	for _, seg := range s.mapped {
		if !seg.cutSeen.Load() && seg.cutSize() >= 0 {
			s.markCut(seg)
		}
	}
}
