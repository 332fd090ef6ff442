package zaplens

import (
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/zaplens/zaplens/internal/zapfield"
)

// An entry's scratch keeps its record's room from one entry to the next,
// but not a huge record's, either way: one huge entry pins no huge buffer
// in the pool. Each entry written by write and released as Write does.
func TestEntryStateKeepsNoHugeRecord(t *testing.T) {
	cleanEnv(t)
	core, _ := wireCore(t)
	e := &entryState{enc: zapfield.NewEncoder()}
	big := strings.Repeat("x", maxPooledRecord)
	write := func(fields ...zapcore.Field) int {
		ent := zapcore.Entry{Level: zapcore.InfoLevel, Message: "m"}
		s, held := core.b.route(ent.Level, ent.LoggerName)
		r := readEntry(fields)
		core.write(e, s, held, &r, &ent, fields)
		if !e.release() {
			t.Fatalf("fields %.40v: the scratch is not worth reusing", fields)
		}
		return cap(e.record)
	}
	room := write(zap.String("s", "small"))
	if room == 0 || room > maxPooledRecord {
		t.Fatalf("a small record left room for %d bytes", room)
	}
	for _, way := range []struct {
		name   string
		fields []zapcore.Field
	}{
		{"the direct way", []zapcore.Field{zap.String("big", big)}},
		{"the general way", []zapcore.Field{zap.Namespace("ns"), zap.String("big", big)}},
	} {
		if got := write(way.fields...); got != room {
			t.Errorf("%s: a huge record left room for %d bytes, want the %d kept before", way.name, got, room)
		}
	}
}
