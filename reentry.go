package zaplens

import (
	"context"
	"reflect"
	"runtime"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
)

// The OTel SDK calls user code on the emitting goroutine, inside Emit, and
// a program may point that code back at a bridged logger:
//
//   - its error handler, for a processor that fails synchronously: each
//     handled error logs a line whose emit fails again, without end;
//   - its internal logger, which warns once, under a sync.Once, when a
//     record loses attributes (over the count limit, a repeated key, an
//     empty key): a line logged from inside that Once which loses
//     attributes too waits on the Once forever.
//
// For the first, the bridge counts emits in flight across the process and,
// past a bound that concurrency seldom reaches, looks for emit on its own
// stack, dropping (and counting) an emit found inside another. Looking on
// every overlap would tell re-entry exactly but cost a stack walk whenever
// two goroutines emit at once. The second needs no look at all: the bridge
// has the SDK give its three warnings once, at init, before any bridge
// exists to receive them; they are V(1) notices a default internal logger
// discards, and records still carry their counts of dropped attributes.

func init() {
	emitCode = codeOf((*bridge).emit)
	primeSDKWarnings()
}

// primeSDKWarnings has sdk/log give its three warnings on a Record of its
// own: a zero Record keeps no attribute, so one duplicate and one empty key
// among those it is given set off each. The warnings are package-level
// Onces, so no provider is needed, and a program pays only for Record's
// code, not for a provider's.
func primeSDKWarnings() {
	var r sdklog.Record
	r.AddAttributes(attribute.Int("a", 1), attribute.Int("a", 2), attribute.Int("", 3))
}

// checkEmitDepth is how many emits may be in flight at once before an emit
// looks at its stack.
const checkEmitDepth = 64

var emitting atomic.Int32

// emit is never inlined, so that every emit has a frame of its own to be
// found by reentered.
//
//go:noinline
func (b *bridge) emit(ctx context.Context, l log.Logger, rec *log.Record) {
	n := emitting.Add(1)
	defer emitting.Add(-1)
	if n > checkEmitDepth && reentered() {
		b.losses.add("re-entry: the provider logs back into the bridge from inside Emit")
		return
	}
	l.Emit(ctx, *rec)
}

// reentered reports whether this goroutine's stack holds emit twice, the
// current one included. It reads the whole stack, however deep: an error
// handler may log back from any depth, and a bound on frames would let a
// deep one recurse until the stack overflows. It runs only past
// checkEmitDepth emits in flight, so its cost is no concern.
func reentered() bool {
	pcs := make([]uintptr, 256)
	for {
		n := runtime.Callers(1, pcs)
		if n < len(pcs) {
			pcs = pcs[:n]
			break
		}
		pcs = make([]uintptr, 2*len(pcs))
	}
	seen := 0
	for _, pc := range pcs {
		if emitCode.holds(pc) {
			if seen++; seen == 2 {
				return true
			}
		}
	}
	return false
}

// codeRange is where a function's machine code lies, so that a return
// address is matched with two comparisons rather than a symbol lookup.
type codeRange struct{ start, end uintptr }

func (r codeRange) holds(pc uintptr) bool { return r.start < pc && pc < r.end }

// emitCode is set in init: emit refers to it, through reentered.
var emitCode codeRange

// codeOf finds fn's code: its entry, and the first address past it, by
// bisecting on the function table.
func codeOf(fn any) codeRange {
	start := runtime.FuncForPC(reflect.ValueOf(fn).Pointer()).Entry()
	lo, hi := uintptr(1), uintptr(1<<20) // lo inside fn, hi past it
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if f := runtime.FuncForPC(start + mid); f != nil && f.Entry() == start {
			lo = mid
		} else {
			hi = mid
		}
	}
	return codeRange{start, start + hi}
}
