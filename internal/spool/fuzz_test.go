package spool

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zaplens/zaplens/internal/otlpwire"
)

// The reader is tried on files the spool's own writer made, then damaged:
// cut, bytes flipped, junk appended, a page or a range zeroed, a word
// written over. The oracle knows every frame the writer put down and the
// fate of every record, and holds the reader to what the format can
// promise: only records whose frames are intact, none twice, none settled
// (by the header's count or by its mark) while the word that says so is
// intact, everything before the first damaged byte, and a torn count
// whenever a record is missing and some byte of its frame or after it is
// left to show that something was there.

// span is where a frame lies in the file: [off, end).
type span struct{ off, end int }

// written is one record as the writer put it down.
type written struct {
	span
	body    string
	payload []byte
	scope   uint32 // the file's number for its scope
	settled bool   // by the header's count or by its mark
}

// original is a spool file as the writer left it, and what it holds.
type original struct {
	path     string
	file     []byte
	resource span
	scopes   map[uint32]span // the scope frames, by number
	records  []written
	byBody   map[string]int
	settled  uint64 // the header's count, as the writer was told
}

// The fixture: 160 records over three pages, in four scopes whose frames
// lie between the records, the first two at the start, the third among the
// records the header's count covers, the fourth among the marked ones.
const (
	fixtureRecords = 160
	fixtureSegment = 16 << 10
)

var fixtureScopes = []otlpwire.Scope{
	otlpwire.NewScope("a", "", "", nil),
	otlpwire.NewScope("b", "v1", "", nil),
	otlpwire.NewScope("c", "", "https://example.com/c", nil),
	otlpwire.NewScope("d", "v3", "", nil),
}

func fixtureScope(i int) int {
	switch {
	case i < 30:
		return i % 2
	case i < 100:
		return i % 3
	default:
		return i % 4
	}
}

// fixtureFates are the Settle calls, in order: the first settles by the
// header's count, the settled after the first kept are marked, and the
// records never told stay kept.
var fixtureFates = []struct {
	n    int
	keep bool
}{{50, false}, {10, true}, {20, false}, {10, true}, {30, false}}

// writeOriginal writes the fixture into dir with the spool and reads it
// back as bytes.
func writeOriginal(tb testing.TB, dir string) *original {
	tb.Helper()
	s := openTest(tb, dir, func(c *Config) { c.SegmentBytes = fixtureSegment })
	for i, sc := range fixtureScopes[2:] {
		s.AddScope(i+2, sc)
	}
	o := &original{resource: span{headerSize, s.active.off}, scopes: map[uint32]span{}, byBody: map[string]int{}}
	for i := range fixtureRecords {
		body := fmt.Sprintf("record %03d%s", i, strings.Repeat("x", i%7))
		rec := encoded(body)
		before := s.active.off
		if v := s.Append(fixtureScope(i), rec); v != 0 {
			tb.Fatalf("record %d: verdict %d", i, v)
		}
		w := written{span: span{s.active.off - frameSize(len(rec)), s.active.off}, body: body, payload: rec, scope: uint32(fixtureScope(i))}
		if w.off != before {
			o.scopes[w.scope] = span{before, w.off}
		}
		o.byBody[body] = i
		o.records = append(o.records, w)
	}
	told := 0
	for _, f := range fixtureFates {
		if !f.keep {
			for i := told; i < told+f.n; i++ {
				o.records[i].settled = true
			}
		}
		if told == 0 {
			o.settled = uint64(f.n)
		}
		s.Settle(f.n, f.keep)
		told += f.n
	}
	s.Close(context.Background())
	files := segFiles(tb, dir)
	if len(files) != 1 || len(o.scopes) != len(fixtureScopes) {
		tb.Fatalf("files %v, scope frames %v: want one file and every scope's frame", files, o.scopes)
	}
	o.path = files[0]
	var err error
	if o.file, err = os.ReadFile(o.path); err != nil {
		tb.Fatal(err)
	}
	if got := order.Uint64(o.file[offSettled:]); got != o.settled {
		tb.Fatalf("the header counts %d settled, want %d", got, o.settled)
	}
	return o
}

// framesEnd is where the writer's last frame ends.
func (o *original) framesEnd() int { return o.records[len(o.records)-1].end }

// Damage is a list of operations of five bytes each: what, two bytes of
// place, two of value.
const (
	opCut = iota
	opFlip
	opJunk
	opZeroPage
	opWord
	opZeroRange
	ops
)

func op(what, place, value int) []byte {
	return []byte{byte(what), byte(place >> 8), byte(place), byte(value), byte(value >> 8)}
}

// damage applies the operations to a copy of the file. Places fall among
// the frames and a little after them, where damage means something.
func (o *original) damage(script []byte) []byte {
	d := bytes.Clone(o.file)
	reach := o.framesEnd() + 256
	for ; len(script) >= 5; script = script[5:] {
		place := int(script[1])<<8 | int(script[2])
		value := int(script[3]) | int(script[4])<<8
		at := min(place%reach, len(d))
		switch script[0] % ops {
		case opCut:
			d = d[:at]
		case opFlip:
			if at < len(d) {
				d[at] ^= byte(value)
			}
		case opJunk:
			for i := range value%64 + 1 {
				d = append(d, byte(value>>8+i*place))
			}
		case opZeroPage:
			if p := (value % 4) * pageSize; p < len(d) {
				clear(d[p:min(len(d), p+pageSize)])
			}
		case opWord:
			if at &^= 3; at+4 <= len(d) {
				order.PutUint32(d[at:], uint32(value)|uint32(script[0]&0xf0)<<24)
			}
		case opZeroRange:
			clear(d[at:min(len(d), at+value%512)])
		}
	}
	return d
}

// intact tells whether d holds the frame at s as the writer wrote it, its
// settled mark aside (the mark is the one word no checksum covers), and
// the zeros that pad it to a word aside too.
func (o *original) intact(d []byte, s span) bool {
	end := s.off + frameHead + frameLen(o.file, s.off)
	if end > len(d) {
		return false
	}
	return order.Uint32(d[s.off:])&^settledBit == order.Uint32(o.file[s.off:])&^settledBit &&
		bytes.Equal(d[s.off+4:end], o.file[s.off+4:end])
}

// same tells whether d holds the original's bytes in [from, to).
func (o *original) same(d []byte, from, to int) bool {
	return to <= len(d) && bytes.Equal(d[from:to], o.file[from:to])
}

// firstDiff is the first place where d differs from the original.
func (o *original) firstDiff(d []byte) int {
	n := min(len(d), len(o.file))
	for i := range n {
		if d[i] != o.file[i] {
			return i
		}
	}
	if len(d) == len(o.file) {
		return len(d) + 1 // no difference
	}
	return n
}

// markedIn tells whether the record's length word in d carries the mark.
func markedIn(d []byte, w written) bool {
	return w.off+4 <= len(d) && order.Uint32(d[w.off:])&settledBit != 0
}

// check holds the reader to the oracle on d.
func (o *original) check(t *testing.T, d []byte) {
	t.Helper()
	c, err := parse(d, true)
	counted, cerr := parse(d, false)
	headerSame := o.same(d, 0, headerSize)
	if err != nil || cerr != nil {
		if headerSame || (err == nil) != (cerr == nil) {
			t.Fatalf("an intact header, or the two reads disagree: %v, %v", err, cerr)
		}
		return
	}
	countSame := o.same(d, offHeader, offSettled+8) // where frames start, and the count
	sent := map[int]bool{}
	for i := min(c.settled, uint64(len(c.records))); i < uint64(len(c.records)); i++ {
		r := c.records[i]
		if r.payload == nil {
			continue
		}
		j, ok := o.byBody[bodyOf(r.payload)]
		switch w := o.records[j]; {
		case !ok || !bytes.Equal(r.payload, w.payload):
			t.Fatalf("sent a record never written: %q", r.payload)
		case !o.intact(d, w.span):
			t.Fatalf("sent record %d, whose frame is damaged", j)
		case sent[j]:
			t.Fatalf("sent record %d twice", j)
		case j < int(o.settled) && countSame:
			t.Fatalf("sent record %d, settled by the header's intact count of %d", j, o.settled)
		case w.settled && markedIn(d, w):
			t.Fatalf("sent record %d, marked settled", j)
		case !o.sameScope(d, c.scopes[r.kind], w.scope):
			t.Fatalf("sent record %d with scope %v, want %v or, its frame damaged, none", j, c.scopes[r.kind], fixtureScopes[w.scope])
		}
		sent[j] = true
	}
	if c.unsent != uint64(len(sent)) || counted.unsent != c.unsent || counted.torn != c.torn {
		t.Fatalf("counted %d unsent (%d without keeping, torn %d and %d), sent %d", c.unsent, counted.unsent, c.torn, counted.torn, len(sent))
	}
	if !headerSame {
		return
	}
	if r, _ := c.resource.Raw(); r == nil && o.intact(d, o.resource) {
		t.Fatalf("the resource frame is intact, and not read")
	}
	diff := o.firstDiff(d)
	for j, w := range o.records {
		switch {
		case w.settled || sent[j]:
		case w.off+frameHead+len(w.payload) <= diff:
			t.Fatalf("record %d is before the first damage, at %d, and not sent", j, diff)
		case c.torn == 0 && !markedIn(d, w) && left(d, w.off):
			t.Fatalf("record %d not sent, some of it left, and nothing counted torn", j)
		}
	}
}

// left tells whether some byte is left non-zero in d at off or after it,
// within the size the file was made with.
func left(d []byte, off int) bool {
	end := min(len(d), fixtureSegment)
	return off < end && !allZero(d[off:end])
}

// sameScope tells whether got is the scope the writer wrote as number k,
// or the empty one while that scope's frame is damaged.
func (o *original) sameScope(d []byte, got otlpwire.Scope, k uint32) bool {
	gf, gu := got.Raw()
	wf, wu := fixtureScopes[k].Raw()
	if bytes.Equal(gf, wf) && gu == wu {
		return true
	}
	return gf == nil && gu == "" && !o.intact(d, o.scopes[k])
}

// bodyOf finds the body in a record's payload: the fixture's bodies are
// "record NNN" and some x's, and no other field holds that text.
func bodyOf(payload []byte) string {
	i := bytes.Index(payload, []byte("record "))
	if i < 0 {
		return ""
	}
	j := i + len("record 000")
	for j < len(payload) && payload[j] == 'x' {
		j++
	}
	return string(payload[i:min(j, len(payload))])
}

// FuzzRead damages a real spool file and holds the reader to the oracle.
func FuzzRead(f *testing.F) {
	o := writeOriginal(f, f.TempDir())
	w := o.records
	f.Add([]byte{}) // intact: every unsettled record, nothing torn
	for _, seed := range [][]byte{
		op(opCut, w[120].off+20, 0),                     // a torn last frame
		op(opCut, w[100].off, 0),                        // cut at a frame's start
		op(opFlip, w[55].off+20, 0x10),                  // a kept record's payload
		op(opFlip, w[20].off+20, 0x01),                  // a settled one's
		op(opFlip, o.scopes[2].off+11, 0x80),            // a scope's kind, before the count's end
		op(opFlip, w[70].off+3, 0x80),                   // a mark taken off
		op(opJunk, 0, 0x4110),                           // junk after the file
		op(opZeroPage, 0, 1),                            // the second page
		op(opWord, w[30].off, w[31].end-w[30].off-12),   // a length over the next frame
		op(opZeroRange, w[60].off, w[62].end-w[60].off), // frames zeroed
		op(opWord, o.framesEnd(), 0x40),                 // a length after the last frame
		append(op(opFlip, w[10].off+30, 1), op(opFlip, w[130].off+30, 1)...),
		op(opCut, headerSize, 0),                               // the header alone
		op(opCut, w[159].end+8, 0),                             // a frame's head cut short
		op(opCut, w[159].off+frameHead+len(w[159].payload), 0), // the padding cut
		op(opZeroRange, w[159].off, 4),                         // a length gone, the rest left
		op(opJunk, 0, 2),                                       // junk shorter than a word
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, script []byte) {
		o.check(t, o.damage(script))
	})
}

// A torn frame whose length leads to bytes that are no frame is the end of
// what can be read: the walk stops there, the tear counted once, rather
// than trust lengths read from garbage. Here record 40's length leads into
// record 41, where two words that read as lengths lead on to record 42:
// read as frames, they would be counted as records, and the records after
// them found past the header's count, the settled ones included.
func TestShipStopsAtAnUntrustedLength(t *testing.T) {
	o := writeOriginal(t, t.TempDir())
	w := o.records
	d := bytes.Clone(o.file)
	p := w[41].off + 4
	q := p + frameSize(4)
	order.PutUint32(d[w[40].off:], uint32(p-w[40].off-frameHead))
	order.PutUint32(d[p:], 4)
	order.PutUint32(d[p+8:], 0) // a kind that reads as a record's
	order.PutUint32(d[q:], uint32(w[42].off-q-frameHead))
	order.PutUint32(d[q+8:], 0)
	if err := os.WriteFile(o.path, d, 0o600); err != nil {
		t.Fatal(err)
	}
	var r received
	sh := shipAll(t, filepath.Dir(o.path), &r, true)
	if got := r.sorted(); len(got) != 0 {
		t.Errorf("shipped %d records, first %q: want none, every record before the tear settled", len(got), got[0])
	}
	if c := sh.Counts(); c.Found != 0 || c.Torn != 1 {
		t.Errorf("counts %+v: want nothing found and one tear", c)
	}
}

// Bytes past the size a file was made with are junk, even when they read
// as frames: here a copy of record 150's frame, right after frames that
// run to the size. Read as a frame, it would be sent twice.
func TestPastTheSizeIsNotRead(t *testing.T) {
	o := writeOriginal(t, t.TempDir())
	d := bytes.Clone(o.file)
	end := o.framesEnd()
	order.PutUint64(d[offSize:], uint64(end))
	w := o.records[150]
	copy(d[end:], o.file[w.off:w.end])
	c, err := parse(d, false)
	if err != nil || c.unsent != 60 || c.torn != 1 {
		t.Fatalf("error %v, contents %+v: want the 60 records unsent once each, and the junk past the size counted", err, c)
	}
}

// A scope with nothing in it, no name, no version, no attributes, is a
// scope frame of a number and a zero length: sound, and read back.
func TestEmptyScopeReadBack(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, nil)
	s.AddScope(2, otlpwire.Scope{})
	s.Append(2, encoded("no scope"))
	s.Close(context.Background())
	var r received
	sh := shipAll(t, dir, &r, true)
	if got := r.sorted(); len(got) != 1 || got[0] != "writer//no scope" || sh.Counts().Torn != 0 {
		t.Errorf("shipped %q, counts %+v: want the record with its empty scope, nothing torn", got, sh.Counts())
	}
}

// Whole frames with the right checksum and wrong content: a resource or a
// scope whose payload does not parse, a kind no writer uses. Each is
// counted torn and passed over; the records around them are read. A file
// of version 1 is read; of version 0, refused; of a later one, left.
func TestSoundFramesOfBadContent(t *testing.T) {
	o := writeOriginal(t, t.TempDir())
	for _, tc := range []struct {
		name    string
		kind    uint32
		payload []byte
	}{
		{"resource", kindResource, []byte{1, 2}},
		{"scope", kindScope, []byte{1, 2, 3, 4, 0xff, 0, 0, 0}},
		{"unknown kind", kindFirst + 7, []byte("x")},
	} {
		d := bytes.Clone(o.file)
		end := putFrame(d, o.framesEnd(), tc.kind, tc.payload)
		putFrame(d, end, 0, o.records[0].payload)
		c, err := parse(d, true)
		if err != nil || c.torn != 1 || c.unsent != 61 {
			t.Errorf("%s: error %v, contents %+v: want it torn, and the 61 records after the count read", tc.name, err, c)
		}
	}
	for v, want := range map[uint32]error{0: errNotSegment, 1: nil, version + 1: errNewerVersion} {
		d := bytes.Clone(o.file)
		order.PutUint32(d[offVersion:], v)
		if _, err := parse(d, false); err != want {
			t.Errorf("version %d: %v, want %v", v, err, want)
		}
	}
}
