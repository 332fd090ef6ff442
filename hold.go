package zaplens

import (
	"context"
	"sync"
	"time"
	"unsafe"
	"weak"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap/zapcore"

	"github.com/zaplens/zaplens/internal/direct"
	"github.com/zaplens/zaplens/internal/otlpwire"
)

// Defaults of [WithHold], chosen in docs/hold.md.
const (
	// DefaultHoldBytes bounds what one bridge holds, all traces together.
	DefaultHoldBytes = 8 << 20
	// DefaultHoldTraceBytes bounds what one trace holds.
	DefaultHoldTraceBytes = 256 << 10
	// DefaultHoldTraceLines bounds how many entries one trace holds.
	DefaultHoldTraceLines = 2048
	// DefaultHoldIdle frees a trace's entries when nothing was logged in
	// it for that long and no span processor said it ended.
	DefaultHoldIdle = time.Minute
)

// KeyHoldEvicted is the attribute of the first entry shipped for a trace
// that lost held entries to a bound: how many it lost, oldest first.
const KeyHoldEvicted = "zaplens.hold.evicted"

// What a held trace and a held log.Record cost beside their bytes,
// counted against the bounds so that many small entries or many empty
// traces cannot pass them.
const (
	heldTraceOverhead  = 256 // the struct, and its place in the map
	heldRecordOverhead = 160 // a heldRecord beside its attributes
)

// holdConfig is what WithHold and its companions set.
type holdConfig struct {
	on         bool
	level      zapcore.Level // the least level held
	trigger    zapcore.Level // the least level that ships its trace's held entries
	triggerSet bool
	maxBytes   int
	traceBytes int
	traceLines int
	idle       time.Duration
}

// holds reports whether an entry at l, which the bridge's level leaves
// out, is one to hold.
func (h *holdConfig) holds(l zapcore.Level) bool { return h.on && l >= h.level }

// HoldStats are a bridge's counts of held entries since it was built.
type HoldStats struct {
	Held     uint64 // entries held
	Shipped  uint64 // held entries shipped, their trace having failed
	Evicted  uint64 // held entries a bound pushed out, never shipped
	Released uint64 // held entries freed, their trace ended without failing, or idle
	Entries  int    // entries held now
	Bytes    int    // the room held now, by the bounds' measure: emptied traces kept for reuse too
	Traces   int    // traces holding entries, or failing, now
}

// holdStore keeps the held entries of a bridge, by trace. Its bytes count
// the room the entries take, not their length: the arenas' and slices'
// capacity, the records, each trace's own struct, and the emptied traces
// kept for reuse, so that the bound bounds the heap.
type holdStore struct {
	cfg holdConfig

	mu     sync.Mutex
	traces map[trace.TraceID]*heldTrace
	lru    heldTrace    // ring of traces with room, by last touch: lru.next is the idlest
	tombs  heldTrace    // ring of traces stripped by the bound: their eviction count, no room
	free   []*heldTrace // emptied traces, kept for their room
	bytes  int
	timer  *time.Timer // the idle sweep, pending while traces are held
	stats  HoldStats
}

// maxFreeTraces bounds the emptied traces kept for reuse: enough for the
// traces a busy process starts between two of its ends.
const maxFreeTraces = 64

// heldTrace is one trace's held entries, oldest first from head. Direct
// entries' bytes live in arena, in order, so that a trace's room is
// reused from entry to entry and from trace to trace.
type heldTrace struct {
	id         trace.TraceID
	entries    []heldEntry
	head       int
	arena      []byte
	arenaStart int // bytes of arena before it belong to entries gone
	live       int // the held entries' sizes, for the trace's own bound
	records    int // the sizes of its entries held as log.Records
	charged    int // what it counts in the store's bytes
	evicted    int // entries lost to a bound, told on the first shipped
	failing    bool
	touched    time.Time
	prev, next *heldTrace
}

// heldEntry is one held entry: OTLP bytes for a zaplens logger (wire),
// in the trace's arena, or a log.Record for any other. It is small: it is
// copied as the entries' slice grows.
type heldEntry struct {
	wire   direct.Logger
	limits *otlpwire.Limits // the scope's, for the eviction count
	off, n int
	cut    bool
	record *heldRecord
	size   int
}

// heldEntrySize is what one slot of a trace's entries takes.
const heldEntrySize = int(unsafe.Sizeof(heldEntry{}))

// heldRecord is a held entry for a provider of any kind.
type heldRecord struct {
	bridge *bridge
	logger log.Logger
	rec    log.Record
	sc     trace.SpanContext
}

func newHoldStore(cfg holdConfig) *holdStore {
	s := &holdStore{cfg: cfg, traces: map[trace.TraceID]*heldTrace{}}
	s.lru.prev, s.lru.next = &s.lru, &s.lru
	s.tombs.prev, s.tombs.next = &s.tombs, &s.tombs
	registerHoldStore(s)
	return s
}

// keepWire holds b, a record for w, in trace id; false when the trace is
// failing, and b is to be written at once.
func (s *holdStore) keepWire(id trace.TraceID, now time.Time, w direct.Logger, lim *otlpwire.Limits, b []byte, cut bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.trace(id, now)
	if t.failing {
		return false
	}
	off := len(t.arena)
	t.arena = append(t.arena, b...)
	s.add(t, heldEntry{wire: w, limits: lim, off: off, n: len(b), cut: cut, size: len(b)})
	return true
}

// keepRecord holds rec, a record for l, in sc's trace; false when the
// trace is failing, and rec is to be emitted at once.
func (s *holdStore) keepRecord(sc trace.SpanContext, now time.Time, b *bridge, l log.Logger, rec *log.Record) bool {
	h := &heldRecord{bridge: b, logger: l, rec: rec.Clone(), sc: sc}
	if h.rec.ObservedTimestamp().IsZero() {
		h.rec.SetObservedTimestamp(time.Now()) // as the SDK would have, had it been emitted now
	}
	size := recordSize(rec) + heldRecordOverhead
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.trace(sc.TraceID(), now)
	if t.failing {
		return false
	}
	s.add(t, heldEntry{record: h, size: size})
	return true
}

// trace returns id's trace, made if need be, as the one touched last, at
// now: the entry's time, which zap has read already (a clock read less on
// the hot path; a program's own zap clock then times the idle too).
func (s *holdStore) trace(id trace.TraceID, now time.Time) *heldTrace {
	if now.IsZero() {
		now = time.Now()
	}
	t, ok := s.traces[id]
	if ok {
		t.prev.next, t.next.prev = t.next, t.prev
	} else {
		t = s.newTrace()
		t.id = id
		s.traces[id] = t
		if s.timer == nil {
			s.timer = time.AfterFunc(s.cfg.idle, s.sweep)
		}
	}
	t.touched = now
	link(&s.lru, t)
	return t
}

// link puts t last in ring.
func link(ring, t *heldTrace) {
	t.prev, t.next = ring.prev, ring
	ring.prev.next = t
	ring.prev = t
}

// newTrace is an emptied trace, counted, or a new one.
func (s *holdStore) newTrace() *heldTrace {
	if t := s.popFree(); t != nil {
		return t // its room is counted already
	}
	t := &heldTrace{}
	s.recharge(t)
	return t
}

// popFree takes an emptied trace kept for reuse, nil if none.
func (s *holdStore) popFree() *heldTrace {
	n := len(s.free)
	if n == 0 {
		return nil
	}
	t := s.free[n-1]
	s.free[n-1] = nil
	s.free = s.free[:n-1]
	return t
}

// recharge counts t's room in the store's bytes again.
func (s *holdStore) recharge(t *heldTrace) {
	c := heldTraceOverhead + cap(t.arena) + cap(t.entries)*heldEntrySize + t.records
	s.bytes += c - t.charged
	t.charged = c
}

// add appends e to t, pushes out the oldest entries of t past its own
// bounds, and then, past the bridge's, makes room elsewhere.
func (s *holdStore) add(t *heldTrace, e heldEntry) {
	t.entries = append(t.entries, e)
	t.live += e.size
	if e.record != nil {
		t.records += e.size
	}
	s.stats.Held++
	for t.head < len(t.entries) && (len(t.entries)-t.head > s.cfg.traceLines || t.live > s.cfg.traceBytes) {
		s.evictOldest(t)
	}
	s.recharge(t)
	for s.bytes > s.cfg.maxBytes && s.shrink() {
	}
}

// shrink frees room: an emptied trace kept for reuse first, then the
// entries of the trace touched longest ago, all of them (it keeps its
// eviction count, as a tomb), then the oldest tomb. It reports false when
// there is nothing left to free.
func (s *holdStore) shrink() bool {
	if t := s.popFree(); t != nil {
		s.bytes -= t.charged
		return true
	}
	if t := s.lru.next; t != &s.lru {
		n := len(t.entries) - t.head
		s.stats.Evicted += uint64(n)
		t.evicted += n
		t.prev.next, t.next.prev = t.next, t.prev
		clear(t.entries)
		t.entries, t.arena, t.head, t.arenaStart, t.live, t.records = nil, nil, 0, 0, 0, 0
		s.recharge(t)
		link(&s.tombs, t)
		return true
	}
	if t := s.tombs.next; t != &s.tombs {
		s.drop(t, false)
		return true
	}
	return false
}

// evictOldest pushes out t's oldest entry, counted.
func (s *holdStore) evictOldest(t *heldTrace) {
	e := &t.entries[t.head]
	t.live -= e.size
	if e.record != nil {
		t.records -= e.size
	}
	if e.wire != nil {
		t.arenaStart = e.off + e.n
	}
	*e = heldEntry{}
	t.head++
	t.evicted++
	s.stats.Evicted++
	if t.head == len(t.entries) {
		t.entries, t.head, t.arena, t.arenaStart = t.entries[:0], 0, t.arena[:0], 0
	} else if t.arenaStart > len(t.arena)/2 {
		t.compact()
	}
}

// compact moves the live bytes of t's arena, and its entries, to their
// slices' start.
func (t *heldTrace) compact() {
	n := copy(t.arena, t.arena[t.arenaStart:])
	t.arena = t.arena[:n]
	live := copy(t.entries, t.entries[t.head:])
	clear(t.entries[live:])
	t.entries = t.entries[:live]
	for i := range t.entries {
		if t.entries[i].wire != nil {
			t.entries[i].off -= t.arenaStart
		}
	}
	t.head, t.arenaStart = 0, 0
}

// drop forgets t; its entries are the caller's to count. An emptied trace
// of modest room is kept for reuse when reuse asks.
func (s *holdStore) drop(t *heldTrace, reuse bool) {
	t.prev.next, t.next.prev = t.next, t.prev
	delete(s.traces, t.id)
	clear(t.entries)
	*t = heldTrace{entries: t.entries[:0], arena: t.arena[:0], charged: t.charged}
	if reuse && len(s.free) < maxFreeTraces && cap(t.arena) <= 2*s.cfg.traceBytes {
		s.recharge(t)
		s.free = append(s.free, t)
		return
	}
	s.bytes -= t.charged
}

// heldShip is what take hands over for shipping.
type heldShip struct {
	entries []heldEntry
	arena   []byte
	evicted int
}

// take marks id's trace failing and hands over what it holds, for the
// caller to ship outside the lock; the trace then holds nothing more
// until it ends.
func (s *holdStore) take(id trace.TraceID) (out heldShip, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.trace(id, time.Now())
	if t.failing {
		return out, false
	}
	t.failing = true
	if t.head == len(t.entries) && t.evicted == 0 {
		return out, false
	}
	out = heldShip{entries: t.entries[t.head:], arena: t.arena, evicted: t.evicted}
	s.stats.Shipped += uint64(len(out.entries))
	// The room goes with them; the trace counts none until it holds again.
	t.entries, t.arena, t.head, t.arenaStart, t.live, t.records, t.evicted = nil, nil, 0, 0, 0, 0, 0
	s.recharge(t)
	return out, true
}

// release forgets id's trace: it ended here without failing.
func (s *holdStore) release(id trace.TraceID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.traces[id]; ok {
		s.stats.Released += uint64(len(t.entries) - t.head)
		s.drop(t, true)
	}
}

// sweep forgets the traces idle past the idle time, and comes again
// while any is held.
func (s *holdStore) sweep() {
	s.mu.Lock()
	defer s.mu.Unlock()
	cutoff := time.Now().Add(-s.cfg.idle)
	next := time.Time{}
	for _, ring := range []*heldTrace{&s.lru, &s.tombs} {
		for t := ring.next; t != ring; t = ring.next {
			if !t.touched.Before(cutoff) {
				if next.IsZero() || t.touched.Before(next) {
					next = t.touched
				}
				break
			}
			s.stats.Released += uint64(len(t.entries) - t.head)
			s.drop(t, true)
		}
	}
	s.timer = nil
	if !next.IsZero() {
		s.timer = time.AfterFunc(time.Until(next.Add(s.cfg.idle))+time.Millisecond, s.sweep)
	}
}

// Stats returns the store's counts.
func (s *holdStore) Stats() HoldStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.Bytes, st.Traces = s.bytes, len(s.traces)
	for _, t := range s.traces {
		st.Entries += len(t.entries) - t.head
	}
	return st
}

// ship writes what take handed over, in the order it was logged; the
// first carries how many entries the trace lost to a bound, if any.
func (out *heldShip) ship() {
	for i := range out.entries {
		gap := 0
		if i == 0 {
			gap = out.evicted
		}
		out.entries[i].write(out.arena, gap)
	}
}

// write sends one held entry, as it would have gone had it been bridged.
func (e *heldEntry) write(arena []byte, gap int) {
	if e.wire != nil {
		b := arena[e.off : e.off+e.n]
		if gap > 0 {
			b = otlpwire.AppendIntAttr(append([]byte(nil), b...), KeyHoldEvicted, int64(gap), e.limits)
		}
		e.wire.Enqueue(b, e.cut)
		return
	}
	h := e.record
	if gap > 0 {
		h.rec.AddAttributes(attribute.Int(KeyHoldEvicted, gap))
	}
	h.bridge.emit(trace.ContextWithSpanContext(context.Background(), h.sc), h.logger, &h.rec)
}

// recordSize is what a log.Record is counted against the bounds: its
// strings, and a word or two for each value.
func recordSize(r *log.Record) int {
	n := valueSize(r.Body()) + len(r.SeverityText()) + len(r.EventName())
	r.WalkAttributes(func(kv attribute.KeyValue) bool {
		n += len(kv.Key) + valueSize(kv.Value)
		return true
	})
	return n
}

func valueSize(v attribute.Value) int {
	switch v.Type() {
	case attribute.STRING, attribute.BYTESLICE:
		return 16 + len(v.AsString())
	case attribute.MAP:
		n := 24
		for _, kv := range v.AsMap() {
			n += len(kv.Key) + valueSize(kv.Value)
		}
		return n
	case attribute.SLICE:
		n := 24
		for _, x := range v.AsSlice() {
			n += valueSize(x)
		}
		return n
	case attribute.STRINGSLICE:
		n := 24
		for _, x := range v.AsStringSlice() {
			n += 16 + len(x)
		}
		return n
	case attribute.BOOLSLICE:
		return 24 + len(v.AsBoolSlice())
	case attribute.INT64SLICE:
		return 24 + 8*len(v.AsInt64Slice())
	case attribute.FLOAT64SLICE:
		return 24 + 8*len(v.AsFloat64Slice())
	}
	return 16
}

// holdStores are the stores of every bridge built, for the span
// processor's calls, which name a trace and not a bridge. A store is
// held weakly: a bridge no longer used goes, and its store with it.
var holdStores struct {
	sync.Mutex
	all []weak.Pointer[holdStore]
}

func registerHoldStore(s *holdStore) {
	holdStores.Lock()
	defer holdStores.Unlock()
	live := holdStores.all[:0]
	for _, w := range holdStores.all {
		if w.Value() != nil {
			live = append(live, w)
		}
	}
	holdStores.all = append(live, weak.Make(s))
}

// eachHoldStore calls f for every live store.
func eachHoldStore(f func(*holdStore)) {
	holdStores.Lock()
	stores := make([]*holdStore, 0, len(holdStores.all))
	for _, w := range holdStores.all {
		if s := w.Value(); s != nil {
			stores = append(stores, s)
		}
	}
	holdStores.Unlock()
	for _, s := range stores {
		f(s)
	}
}

// ShipHeld ships the entries every bridge of this process holds for the
// trace id, in the order they were logged, as if the trace had logged an
// entry at the trigger level; from then, until [ReleaseHeld], the trace's
// entries at the hold level go straight through. The span processor of
// package zaplens/holdspan calls it when a span ends with an error; a
// program may call it for a failure it knows of otherwise.
func ShipHeld(id trace.TraceID) {
	eachHoldStore(func(s *holdStore) {
		if out, ok := s.take(id); ok {
			out.ship()
		}
	})
}

// ReleaseHeld frees what every bridge of this process holds for the trace
// id, unshipped: the trace ended here without failing. The span processor
// of package zaplens/holdspan calls it when a trace's local root span
// ends.
func ReleaseHeld(id trace.TraceID) {
	eachHoldStore(func(s *holdStore) { s.release(id) })
}
