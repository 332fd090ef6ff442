package zaplens

import (
	"fmt"
	"sync/atomic"
)

// Stats counts the records that went through a [LoggerProvider] since it was
// built. The counts always add up:
//
//	Emitted = Exported + Dropped + Failed + Queued
type Stats struct {
	// Emitted is every record the provider's loggers were handed.
	Emitted uint64
	// Exported is the records the exporter delivered: for OTLP, the ones
	// the collector acknowledged.
	Exported uint64
	// Dropped is the records refused because the queue was full (after the
	// bounded wait of [WithBlockOnFull], if set) or because the provider was
	// shutting down.
	Dropped uint64
	// Failed is the records in exports that failed for good, after the
	// exporter's retries, or that the collector rejected.
	Failed uint64
	// Queued is the records accepted but neither exported nor failed yet:
	// waiting in the queue or in an export in flight. After a Shutdown that
	// ran out of time, they are the records it could not send.
	Queued uint64
}

// Lost is the records that will never be delivered: Dropped + Failed.
func (s Stats) Lost() uint64 { return s.Dropped + s.Failed }

// String formats the counts on one line, for the loss report.
func (s Stats) String() string {
	return fmt.Sprintf("emitted %d, exported %d, dropped %d, failed %d, queued %d",
		s.Emitted, s.Exported, s.Dropped, s.Failed, s.Queued)
}

// counters are the live counts behind [Stats]. They are plain atomics
// because they sit on the logging path, where a lock would make emitters
// wait on each other and on the exporter.
type counters struct {
	emitted  atomic.Uint64
	exported atomic.Uint64
	dropped  atomic.Uint64
	failed   atomic.Uint64
}

// snapshot reads the outcomes before the emitted count: a record is counted
// as emitted before any outcome of it is, so this order keeps Queued from
// going below zero while records are moving.
func (c *counters) snapshot() Stats {
	s := Stats{
		Exported: c.exported.Load(),
		Dropped:  c.dropped.Load(),
		Failed:   c.failed.Load(),
	}
	s.Emitted = c.emitted.Load()
	s.Queued = s.Emitted - s.Exported - s.Dropped - s.Failed
	return s
}
