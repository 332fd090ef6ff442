package pipeline

import (
	"context"
	"strings"
	"testing"

	"github.com/zaplens/zaplens/internal/otlpwire"
)

// The queue takes a record while its bytes, with the most a header takes,
// fit the bound, to the byte, and the record bound to the record.
func TestQueueBoundsExact(t *testing.T) {
	rec := encoded("twelve bytes")
	held := len(rec) + 2 // a queued record: its bytes and two one-byte uvarints
	for _, tc := range []struct {
		name     string
		bytes    int
		records  int
		accepted int
	}{
		{"a second record fits to the byte", held + len(rec) + headerSize, 0, 2},
		{"a byte short", held + len(rec) + headerSize - 1, 0, 1},
		{"records", 1 << 20, 3, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &sink{block: make(chan struct{})}
			p := newTestPipeline(t, s, func(c *Config) { c.MaxQueueBytes, c.MaxQueueRecords = tc.bytes, tc.records })
			t.Cleanup(func() { close(s.block) })
			sc := p.AddScope(otlpwire.Scope{})
			accepted := 0
			for range 5 {
				if p.Enqueue(sc, rec, false) {
					accepted++
				}
			}
			if accepted != tc.accepted {
				t.Errorf("accepted %d of 5, want %d", accepted, tc.accepted)
			}
		})
	}
}

// After a burst of more chunks than it keeps, the queue keeps maxFreeChunks
// for reuse, and takes them again for the next burst.
func TestFreeChunksBounded(t *testing.T) {
	s := &sink{block: make(chan struct{})}
	p := newTestPipeline(t, s, func(c *Config) { c.MaxQueueBytes = 64 << 20; c.MaxBatchRecords = 1 << 20 })
	sc := p.AddScope(otlpwire.Scope{})
	rec := encoded(strings.Repeat("x", 1000))
	burst := 2 * maxFreeChunks * chunkSize / len(rec)
	for range burst {
		p.Enqueue(sc, rec, false)
	}
	close(s.block)
	if err := p.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	free := len(p.q.free)
	p.mu.Unlock()
	if free != maxFreeChunks {
		t.Fatalf("%d chunks kept after a burst of %d records, want %d", free, burst, maxFreeChunks)
	}
	for range chunkSize / len(rec) * 3 {
		p.Enqueue(sc, rec, false)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.q.free) >= maxFreeChunks {
		t.Errorf("%d chunks kept after the next records came: none taken again", len(p.q.free))
	}
}

// Dropping a record at a full queue, with no wait configured, takes no
// allocation: no timer, no wait, whatever the rate of calls.
func TestFullQueueDropsWithoutAllocating(t *testing.T) {
	s := &sink{block: make(chan struct{})}
	p := newTestPipeline(t, s, func(c *Config) { c.MaxQueueBytes = 1 })
	t.Cleanup(func() { close(s.block) })
	sc := p.AddScope(otlpwire.Scope{})
	rec := encoded("x")
	p.Enqueue(sc, rec, false) // the first record always goes in
	if n := testing.AllocsPerRun(100, func() {
		if p.Enqueue(sc, rec, false) {
			t.Fatal("a full queue took a record")
		}
	}); n != 0 {
		t.Errorf("%v allocations a drop", n)
	}
}

// The record bound counts the records not settled yet: once exported, they
// leave room.
func TestRecordBoundCountsUnsettled(t *testing.T) {
	p := newTestPipeline(t, &sink{}, func(c *Config) { c.MaxQueueRecords = 2 })
	sc := p.AddScope(otlpwire.Scope{})
	for round := range 3 {
		for i := range 2 {
			if !p.Enqueue(sc, encoded("x"), false) {
				t.Fatalf("round %d, record %d dropped", round, i)
			}
		}
		if err := p.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// A batch is ready, and goes without waiting for the delay, at
// MaxBatchRecords records, or at half a request's bytes.
func TestBatchReady(t *testing.T) {
	for _, tc := range []struct {
		name    string
		records int
		config  func(*Config)
	}{
		{"records", 3, func(c *Config) { c.MaxBatchRecords = 3 }},
		{"bytes", 3, func(c *Config) { c.MaxRequestBytes = 6 << 10 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &sink{}
			p := newTestPipeline(t, s, tc.config)
			sc := p.AddScope(otlpwire.Scope{})
			for range tc.records {
				p.Enqueue(sc, encoded(strings.Repeat("x", 1100)), false)
			}
			waitFor(t, "the batch exported", func() bool { return s.count() == tc.records })
		})
	}
}

// Small records share a chunk: a queued line costs its bytes, not a chunk.
func TestSmallRecordsShareAChunk(t *testing.T) {
	s := &sink{block: make(chan struct{})}
	p := newTestPipeline(t, s, nil)
	t.Cleanup(func() { close(s.block) })
	sc := p.AddScope(otlpwire.Scope{})
	for range 50 { // half a batch: none leaves
		p.Enqueue(sc, encoded("x"), false)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.q.chunks); n != 1 {
		t.Errorf("50 small records in %d chunks", n)
	}
}
