package zapfield

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/zaplens/zaplens/internal/otlpwire"
	"github.com/zaplens/zaplens/internal/zapfield/fieldtest"
)

// An entry as both ways take it: its With, its fields, its head and what
// features added to the slot.
type waysEntry struct {
	with   With
	ent    zapcore.Entry
	fields []zapcore.Field
	added  []attribute.KeyValue
}

// record is the entry's record but its attributes.
func (w *waysEntry) record() otlpwire.Record {
	return otlpwire.Record{Time: w.ent.Time, Observed: w.ent.Time, Body: StringValue(w.ent.Message), SeverityText: w.ent.Level.String()}
}

// generalWay is the record the general way writes: Attributes, then
// AppendRecord, as the bridge's general way encodes them.
func (w *waysEntry) generalWay(lim otlpwire.Limits) []byte {
	e := GetEncoder()
	defer PutEncoder(e)
	e.Entry.Added = append(e.Entry.Added, w.added...)
	rec := w.record()
	return otlpwire.AppendRecord(nil, &rec, e.Attributes(&w.with, &w.ent, w.fields), lim)
}

// directWay is the record the direct way writes, if it takes the entry;
// else the general way's after it, on the same encoder, which the direct
// way must leave holding nothing but what it converted.
func (w *waysEntry) directWay(lim otlpwire.Limits) ([]byte, bool) {
	e := GetEncoder()
	defer PutEncoder(e)
	e.Entry.Added = append(e.Entry.Added, w.added...)
	rec := w.record()
	b, ok := e.AppendDirect(nil, &w.with, &rec, &w.ent, w.fields, lim)
	if len(e.kvs)+len(e.top)+len(e.frames) > 0 || e.hasErr {
		panic("AppendDirect left its scratch encoder dirty") // the general way after it would start from that
	}
	if ok {
		return b, true
	}
	return otlpwire.AppendRecord(nil, &rec, e.Attributes(&w.with, &w.ent, w.fields), lim), false
}

// The two ways write the same bytes, here, beside their leaves: random
// entries from a pool of every field kind (everyField, the walk's table,
// and values json prints badly), whose keys repeat, with and without a
// With, attributes in the slot, a caller and a stack, under the SDK's
// default limits and under tight ones. Where the direct way declines an
// entry, the general way after it, reusing what it converted, writes what
// the general way alone writes. The bridge's wire_test.go holds the same
// through its Core, and its differential tests hold both to the SDK.
func TestWaysMatch(t *testing.T) {
	pool := fieldtest.KeptValueFields()
	for _, c := range everyField {
		pool = append(pool, c.f)
	}
	pool = append(pool, zap.Error(errors.New("second")), zap.Object("o", everyKey{}), zap.String(KeyFilePath, "mine"))
	limits := []otlpwire.Limits{otlpwire.DefaultLimits, {AttributeCount: 4, ValueLength: 3}}
	slot := []attribute.KeyValue{attribute.String("tenant", "acme"), attribute.String("s", "from the slot")}
	rng := rand.New(rand.NewPCG(3, 4))
	pick := func(n int) []zapcore.Field {
		out := make([]zapcore.Field, n)
		for j := range out {
			out[j] = pool[rng.IntN(len(pool))]
		}
		return out
	}
	taken := 0
	for i := range 6000 {
		lim := limits[i%2]
		var w waysEntry
		if rng.IntN(3) == 0 {
			e := GetEncoder()
			w.with = e.With(&With{}, pick(rng.IntN(4)), &lim)
			PutEncoder(e)
		}
		w.ent = zapcore.Entry{Level: zapcore.Level(rng.IntN(7) - 1), Time: time.Unix(0, int64(i)), Message: "m"}
		if rng.IntN(2) == 0 {
			w.ent.Caller = zapcore.NewEntryCaller(0, "/x.go", i, true)
			w.ent.Caller.Function = "f"
		}
		if rng.IntN(4) == 0 {
			w.ent.Stack = "goroutine 1"
		}
		if rng.IntN(4) == 0 {
			w.added = slot[:1+rng.IntN(len(slot))]
		}
		w.fields = pick(rng.IntN(6))
		want := w.generalWay(lim)
		got, direct := w.directWay(lim)
		if direct {
			taken++
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("entry %d, limits %+v, fields %v, slot %v (the direct way took it: %v):\n got  %x\n want %x", i, lim, w.fields, w.added, direct, got, want)
		}
	}
	if taken < 1000 {
		t.Fatalf("the direct way took only %d of 6000 entries", taken)
	}
	t.Logf("the direct way took %d of 6000 entries", taken)
}
