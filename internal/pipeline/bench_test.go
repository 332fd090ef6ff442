package pipeline

import (
	"fmt"
	"testing"

	"go.opentelemetry.io/otel/attribute"

	"github.com/zaplens/zaplens/internal/otlpwire"
)

// BenchmarkBatch is a batch of the default size through the queue: pushed
// by producers, taken into a request by the exporter and written, of one
// scope, the common case, and of three scopes interleaved, which the
// request groups.
func BenchmarkBatch(b *testing.B) {
	res := otlpwire.NewResource([]attribute.KeyValue{attribute.String("service.name", "train")}, "")
	scopes := []otlpwire.Scope{otlpwire.NewScope("a", "", "", nil), otlpwire.NewScope("b", "", "", nil),
		otlpwire.NewScope("c", "", "", nil)}
	rec := encoded("step progress, a line of the usual size with four fields of the usual kind: step, i, loss and phase")
	for _, n := range []int{1, 3} {
		b.Run(fmt.Sprintf("scopes=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			var q queue
			var bt batcher
			for b.Loop() {
				for i := range 512 {
					q.push(i%n, rec)
				}
				bt.req.Reset(res, scopes, 1<<30)
				bt.done = q.take(&bt.req, 512, bt.done[:0])
				if bt.req.Len() != 512 || len(bt.req.Bytes()) == 0 {
					b.Fatalf("took %d", bt.req.Len())
				}
				q.release(bt.done)
			}
		})
	}
}
