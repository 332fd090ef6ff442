package zaplens

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/baggage"
)

// withTestBaggage returns ctx with baggage members made of kv, key then
// value.
func withTestBaggage(t testing.TB, ctx context.Context, kv ...string) context.Context {
	t.Helper()
	var ms []baggage.Member
	for i := 0; i < len(kv); i += 2 {
		m, err := baggage.NewMemberRaw(kv[i], kv[i+1])
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	bg, err := baggage.New(ms...)
	if err != nil {
		t.Fatal(err)
	}
	return baggage.ContextWithBaggage(ctx, bg)
}
