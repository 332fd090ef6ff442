package zaplens

import (
	"sync"

	"github.com/zaplens/zaplens/internal/zapfield"
)

// entryState is one entry's scratch on its way through the bridge: the
// encoder that converts it, either way (internal/zapfield), whose
// EntryState the bridge sets, and the room its OTLP record is written in,
// kept from one record to the next. Pooled, or a teeWrite's.
type entryState struct {
	enc    zapfield.Encoder
	record []byte
}

// maxPooledRecord keeps one huge record from pinning a huge buffer.
const maxPooledRecord = 64 << 10

// keepRecord keeps b's room for the next record, unless it grew too large.
func (e *entryState) keepRecord(b []byte) {
	if cap(b) <= maxPooledRecord {
		e.record = b[:0]
	}
}

// release empties e once its entry is written, either way, and reports
// whether it is worth reusing.
func (e *entryState) release() bool { return e.enc.Release() }

var entryPool = sync.Pool{New: func() any { return &entryState{enc: zapfield.NewEncoder()} }}

func getEntry() *entryState { return entryPool.Get().(*entryState) }

func putEntry(e *entryState) {
	if e.release() {
		entryPool.Put(e)
	}
}
