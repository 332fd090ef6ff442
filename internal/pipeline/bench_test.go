package pipeline

import (
	"fmt"
	"testing"

	"go.opentelemetry.io/otel/attribute"

	"github.com/zaplens/zaplens/internal/otlpwire"
)

// BenchmarkBuild is the exporter writing a batch of the default size into a
// request: of one scope, the common case, and of three scopes interleaved,
// which it groups.
func BenchmarkBuild(b *testing.B) {
	res := otlpwire.NewResource([]attribute.KeyValue{attribute.String("service.name", "train")}, "")
	scopes := []otlpwire.Scope{otlpwire.NewScope("a", "", "", nil), otlpwire.NewScope("b", "", "", nil),
		otlpwire.NewScope("c", "", "", nil)}
	rec := encoded("step progress, a line of the usual size with four fields of the usual kind: step, i, loss and phase")
	for _, n := range []int{1, 3} {
		b.Run(fmt.Sprintf("scopes=%d", n), func(b *testing.B) {
			batch := make([]record, 512)
			for i := range batch {
				batch[i] = record{scope: i % n, data: rec}
			}
			var bt batcher
			for b.Loop() {
				bt.records = append(bt.records[:0], batch...) // grouping reorders them
				bt.build(res, scopes)
			}
		})
	}
}
