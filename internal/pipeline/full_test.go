package pipeline

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zaplens/zaplens/internal/otlpwire"
)

// Full closes when the queue turns a record away: an export waiting to
// retry, which holds the oldest records, gives way, and the exporter takes
// the next batch, which makes room for newer records.
func TestFullTellsTheWaitingExport(t *testing.T) {
	var p *Pipeline
	started, gaveWay, stop := make(chan int, 64), make(chan struct{}, 64), make(chan struct{})
	defer close(stop)
	p = New(Config{MaxQueueBytes: 1024, MaxBatchRecords: 4, MaxRequestBytes: 1 << 20,
		ScheduleDelay: time.Millisecond, ExportTimeout: time.Minute,
		Export: func(ctx context.Context, _ []byte, n int, _ bool) (int, error) {
			full := p.Full() // taken when the export starts, as the transport's is
			started <- n
			select { // the collector is down: wait to retry, until the queue needs the room
			case <-full:
				gaveWay <- struct{}{}
				return n, errors.New("gave way")
			case <-stop:
				return n, errors.New("the test ended")
			case <-ctx.Done():
				return n, ctx.Err()
			}
		}})
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		_ = p.Shutdown(ctx)
	}()
	sc := p.AddScope(otlpwire.Scope{})
	for range 4 {
		p.Enqueue(sc, encoded("first"), false)
	}
	if n := <-started; n != 4 {
		t.Fatalf("first export of %d records, want 4", n)
	}
	refused := 0
	for range 200 { // far past 1 KiB
		if !p.Enqueue(sc, encoded("newer"), false) {
			refused++
		}
	}
	select {
	case <-gaveWay:
	case <-time.After(5 * time.Second):
		t.Fatalf("the waiting export did not give way; %d refused, counts %+v", refused, p.Counts())
	}
	select {
	case <-started: // the next batch, of newer records
	case <-time.After(5 * time.Second):
		t.Fatalf("no export of the newer records after the first gave way; counts %+v", p.Counts())
	}
	if c := p.Counts(); refused == 0 || c.Failed < 4 || c.Dropped != uint64(refused) {
		t.Errorf("%d refused; counts %+v: want the first batch failed, the refused dropped", refused, c)
	}
}
