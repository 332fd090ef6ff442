package otlplog

import (
	"context"
	"testing"
	"time"

	"github.com/zaplens/zaplens"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/zaplens/zaplens/internal/otlpwire"
)

// With record ids on (by the variable, or the option), every record gets
// a log.record.uid of its own, the bridge's direct way, its general way
// and other code's Emit alike; without, none has one.
func TestRecordUIDOnEveryRecord(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  string
		opts []Option
		want bool
	}{
		{"off by default", "", nil, false},
		{"variable", "true", nil, true},
		{"option over the variable", "true", []Option{WithRecordUID(false)}, false},
		{"option", "", []Option{WithRecordUID(true)}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cleanEnv(t)
			t.Setenv("ZAPLENS_RECORD_UID", tc.env)
			srv := startOTLPServer(t, "127.0.0.1:0", keepRecords())
			p := newTestProvider(t, append([]Option{WithEndpoint("http://" + srv.Addr)}, tc.opts...)...)
			logger := zap.New(zaplens.NewTee(zapcore.NewNopCore(), zaplens.WithLoggerProvider(p)))
			for i := range 50 {
				logger.Info("direct", zap.Int("i", i))
				logger.Info("general", zap.Any("m", map[string]int{"i": i}))
			}
			emit(p, 50)
			if err := p.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			n := 0
			for _, rl := range srv.Resources() {
				for _, sl := range rl.ScopeLogs {
					for _, lr := range sl.LogRecords {
						n++
						for _, kv := range lr.Attributes {
							if kv.Key != otlpwire.KeyRecordUID {
								continue
							}
							uid := kv.Value.GetStringValue()
							if len(uid) != 26 || seen[uid] {
								t.Errorf("uid %q: not a ULID, or seen before", uid)
							}
							seen[uid] = true
						}
					}
				}
			}
			if n != 150 || (len(seen) == n) != tc.want || (len(seen) == 0) == tc.want {
				t.Errorf("%d records, %d with a uid; want uids %v", n, len(seen), tc.want)
			}
		})
	}
}

// BenchmarkRecordUID is what an id adds to a record's encoding: the next
// id, and its 48 bytes written.
func BenchmarkRecordUID(b *testing.B) {
	s := newRecordUIDs()
	rec := otlpwire.Record{Observed: time.Now()}
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		rec.UID = s.next(rec.Observed)
		buf = otlpwire.AppendTail(buf[:0], &rec, 0)
	}
}
