package zaplens

import (
	"context"
	"slices"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/baggage"

	"github.com/zaplens/zaplens/internal/zapfield"
)

// baggageKeys is what WithBaggage set: the members to copy, or all. It is
// a ctxAttrs feature.
type baggageKeys struct {
	all  bool
	keys []string
}

func (b *baggageKeys) add(keys []string) {
	b.all = b.all || len(keys) == 0
	for _, k := range keys {
		if !slices.Contains(b.keys, k) {
			b.keys = append(b.keys, k)
		}
	}
}

// appendAttrs appends the baggage of ctx that b names, as baggagecopy makes it:
// one string attribute per member, its key and its value. All members go
// in the order of their keys, so that a record does not change from one
// run to the next (baggage keeps them in a map).
func (b *baggageKeys) appendAttrs(dst []attribute.KeyValue, ctx context.Context) []attribute.KeyValue {
	bg := baggage.FromContext(ctx)
	if bg.Len() == 0 {
		return dst
	}
	if !b.all {
		for _, k := range b.keys {
			if m := bg.Member(k); m.Key() != "" {
				dst = append(dst, zapfield.StringAttr(m.Key(), m.Value()))
			}
		}
		return dst
	}
	n := len(dst)
	for _, m := range bg.Members() {
		dst = append(dst, zapfield.StringAttr(m.Key(), m.Value()))
	}
	// Sorted as attributes, not as members: the sort of []attribute.KeyValue
	// is linked already (internal/zapfield, attribute.NewSet), one of
	// []baggage.Member would be 15 KB of code more (benchmarks/binsize).
	// Keys are unique, so stable or not gives the same order.
	slices.SortStableFunc(dst[n:], zapfield.ByKey)
	return dst
}
