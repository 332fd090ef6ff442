package spool

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zaplens/zaplens/internal/otlpwire"
	"github.com/zaplens/zaplens/internal/pipeline"
)

// outage is a collector that is down until up is closed: each export then
// fails after a short wait, with no answer, as a refused connection's
// retries do.
type outage struct {
	received
	up chan struct{}
}

func (o *outage) export(ctx context.Context, body []byte, n int, final bool) (int, error) {
	select {
	case <-o.up:
		return o.received.export(ctx, body, n, final)
	case <-time.After(20 * time.Millisecond):
		return n, errors.New("collector down")
	}
}

// spooledPipeline is a pipeline journaled by a spool on a fresh directory,
// with a small queue, exporting to o.
func spooledPipeline(t *testing.T, o *outage, queueBytes int) (*pipeline.Pipeline, *Spool, string) {
	t.Helper()
	dir := t.TempDir()
	p, s := spooledPipelineIn(t, dir, o, queueBytes, nil)
	return p, s, dir
}

// spooledPipelineIn is spooledPipeline on dir, its spool's lines told to say.
func spooledPipelineIn(t *testing.T, dir string, o *outage, queueBytes int, say func(string)) (*pipeline.Pipeline, *Spool) {
	t.Helper()
	s := openTest(t, dir, func(c *Config) { c.Say = say })
	p := pipeline.New(pipeline.Config{MaxQueueBytes: queueBytes, MaxBatchRecords: 50, MaxRequestBytes: 1 << 20,
		ScheduleDelay: 10 * time.Millisecond, ExportTimeout: 5 * time.Second, Export: o.export, Journal: s,
		Resource: s.cfg.Resource})
	p.AddScope(otlpwire.NewScope("a", "", "", nil))
	p.AddScope(otlpwire.NewScope("b", "v1", "", nil))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = p.Shutdown(ctx)
		p.CloseJournal(ctx)
	})
	return p, s
}

// checkOnceInOrder fails unless o received want records, "line %05d" from
// 0 on, each once, in order.
func checkOnceInOrder(t *testing.T, o *received, want int) {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.lines) != want {
		t.Fatalf("received %d records, want %d", len(o.lines), want)
	}
	for i, line := range o.lines {
		if w := fmt.Sprintf("writer/a/line %05d", i); line != w {
			t.Fatalf("record %d is %q, want %q: lost, sent twice, or out of order", i, line, w)
		}
	}
}

// With the spool on, a queue that fills while the collector is down loses
// nothing: what does not fit in memory stays on disk, and the live process
// sends it all, oldest first and once, when the collector is back.
func TestSpilledRecordsSentAfterOutage(t *testing.T) {
	o := &outage{up: make(chan struct{})}
	p, _, dir := spooledPipeline(t, o, 4<<10) // about 70 records
	const lines = 3000
	for i := range lines {
		if !p.Enqueue(0, encoded(fmt.Sprintf("line %05d", i)), false) {
			t.Fatalf("record %d dropped while the collector was down; counts %+v", i, p.Counts())
		}
	}
	if c := p.Counts(); c.Dropped != 0 || c.Failed != 0 || c.Queued != lines {
		t.Fatalf("during the outage, counts %+v: want all %d queued", c, lines)
	}
	close(o.up)
	waitFor(t, func() bool { return p.Counts().Exported >= lines })
	checkOnceInOrder(t, &o.received, lines)
	if c := p.Counts(); c.Failed != 0 || c.Queued != 0 {
		t.Errorf("counts %+v", c)
	}
	waitFor(t, func() bool { return len(segFiles(t, dir)) <= 3 }) // the active file and the spares: the rest settled
}

// A live process sends its own failed exports once the collector is back,
// each record once: they stay in the spool, and the exporter reads them
// back from there, with the records that came after them.
func TestFailedExportsSentByLiveProcess(t *testing.T) {
	o := &outage{up: make(chan struct{})}
	p, _, _ := spooledPipeline(t, o, 1<<20)
	for i := range 120 {
		p.Enqueue(0, encoded(fmt.Sprintf("line %05d", i)), false)
	}
	time.Sleep(200 * time.Millisecond) // several exports fail meanwhile
	for i := 120; i < 200; i++ {
		p.Enqueue(0, encoded(fmt.Sprintf("line %05d", i)), false)
	}
	if c := p.Counts(); c.Failed != 0 || c.Queued != 200 {
		t.Fatalf("during the outage, counts %+v: want all 200 queued, none failed", c)
	}
	close(o.up)
	waitFor(t, func() bool { return p.Counts().Exported >= 200 })
	checkOnceInOrder(t, &o.received, 200)
	if err := p.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if c := p.Counts(); c.Failed != 0 || c.Queued != 0 {
		t.Errorf("counts %+v", c)
	}
}

// A shutdown that finds the collector still down keeps what waits in the
// files for the next start, counted kept: the records of failed exports
// and those spilled, never sent, alike. The next process sends them all,
// once, in order.
func TestShutdownKeepsSpilledRecords(t *testing.T) {
	o := &outage{up: make(chan struct{})}
	p, s, dir := spooledPipeline(t, o, 4<<10)
	const lines = 3000
	for i := range lines {
		if !p.Enqueue(0, encoded(fmt.Sprintf("line %05d", i)), false) {
			t.Fatalf("record %d dropped", i)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = p.Shutdown(ctx)
	p.CloseJournal(ctx)
	if c := p.Counts(); c.Exported != 0 || c.Failed+c.Queued != lines || s.Kept() != lines {
		t.Fatalf("counts %+v, %d kept: want all %d lines kept", c, s.Kept(), lines)
	}
	var r received
	shipAll(t, dir, &r, true)
	checkOnceInOrder(t, &r, lines)
}

// rssFile is the process's resident file-backed memory, from
// /proc/self/status, in bytes.
func rssFile(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip(err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "RssFile:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Skip("no RssFile in /proc/self/status")
	return 0
}

// Files filled while the collector is away do not stay in the process's
// memory: through an outage the spool holds far more than the queue, and
// its mapped pages would count in the process's resident memory. A full
// file's pages are let go from the mapping (they stay in the page cache,
// and on disk), and read back when their turn comes.
func TestFullFilesLeaveResidentMemory(t *testing.T) {
	s := openTest(t, t.TempDir(), func(c *Config) { c.SegmentBytes = DefaultSegmentBytes; c.MaxBytes = 64 << 20 })
	defer s.Close(context.Background())
	rec := encoded(strings.Repeat("x", 1000))
	before := rssFile(t)
	for range (40 << 20) / len(rec) { // ten files, none settled
		if v := s.Append(0, rec); v != pipeline.Journaled {
			t.Fatalf("verdict %v", v)
		}
	}
	// The file being filled and the spares ready stay mapped: 12 MiB.
	if grew := rssFile(t) - before; grew > 20<<20 {
		t.Errorf("resident file memory grew by %d MiB for 40 MiB of records in files", grew>>20)
	}
	req := new(otlpwire.Request)
	req.Reset(otlpwire.Resource{}, []otlpwire.Scope{{}, {}}, 1<<30)
	if n, missing := s.Replay(0, req, 100); n != 100 || missing != 0 || req.Len() != 100 {
		t.Errorf("read back %d records, %d missing, %d in the request; want 100 from the first file", n, missing, req.Len())
	}
}

// Files whose records were read back and kept for a later process (a
// flush or the shutdown found the collector down) do not stay in the
// process's memory either: the reading brought their pages back.
func TestKeptFilesLeaveResidentMemory(t *testing.T) {
	s := openTest(t, t.TempDir(), func(c *Config) { c.SegmentBytes = DefaultSegmentBytes; c.MaxBytes = 64 << 20 })
	defer s.Close(context.Background())
	rec := encoded(strings.Repeat("x", 1000))
	const records = (40 << 20) / 1000 // ten files
	for range records {
		if v := s.Append(0, rec); v != pipeline.Journaled {
			t.Fatalf("verdict %v", v)
		}
	}
	before := rssFile(t)
	req := new(otlpwire.Request)
	for from := 0; from < records-2000; { // the last file's are not read
		req.Reset(otlpwire.Resource{}, []otlpwire.Scope{{}, {}}, 4<<20)
		n, _ := s.Replay(uint64(from), req, 2000)
		_ = req.Bytes()
		s.Settle(n, true)
		from += n
	}
	if grew := rssFile(t) - before; grew > 8<<20 {
		t.Errorf("resident file memory grew by %d MiB reading back 40 MiB of records, kept", grew>>20)
	}
}
