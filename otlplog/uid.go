package otlplog

import (
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/zaplens/zaplens/internal/otlpwire"
)

// recordUIDs makes the log.record.uid of a provider's records, as ULIDs:
// 48 bits of the record's time in milliseconds, then 80 bits drawn once
// per provider plus a count. No two records of a provider share one, and
// two providers only by a chance of one in 2^80 a pair; a record costs an
// atomic add, not a draw. A record sent twice (a retry, a spool's replay
// after SIGKILL) keeps its id, encoded once with it: a backend or a
// Collector can drop the second.
type recordUIDs struct {
	hi   uint64 // 16 of the 80 drawn bits
	base uint64 // the other 64
	n    atomic.Uint64
}

func newRecordUIDs() *recordUIDs {
	return &recordUIDs{hi: rand.Uint64() & 0xffff, base: rand.Uint64()}
}

// next is the id of a record of time t.
func (s *recordUIDs) next(t time.Time) otlpwire.UID {
	ms := uint64(t.UnixMilli()) & (1<<48 - 1)
	return otlpwire.UID{Hi: ms<<16 | s.hi, Lo: s.base + s.n.Add(1)}
}

// setUID gives rec its id, when the provider gives ids.
func (p *LoggerProvider) setUID(rec *otlpwire.Record) {
	if p.uids != nil {
		rec.UID = p.uids.next(rec.Observed)
	}
}
