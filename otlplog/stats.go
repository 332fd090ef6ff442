package otlplog

import (
	"fmt"

	"github.com/zaplens/zaplens/internal/pipeline"
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
	// bounded wait of [WithBlockOnFull], if set), or, with the spool on,
	// because the spool was at its bound ([WithSpoolBytes]), or because the
	// provider was shutting down.
	Dropped uint64
	// Failed is the records in exports that failed for good, after the
	// exporter's retries, or that the collector rejected.
	Failed uint64
	// Queued is the records accepted but neither exported nor failed yet:
	// waiting in the queue or in an export in flight. After a Shutdown that
	// ran out of time, they are the records it could not send.
	Queued uint64
	// Cut is the records too large for any export request whose longest
	// values were cut to fit; they are counted as delivered too.
	Cut uint64

	// The spool's counts ([WithSpool]); zero without it.

	// Unprotected is the records accepted while the spool had stepped
	// aside (an unwritable directory, a full disk, a file size limit):
	// they went on in memory only, without crash protection. They are
	// counted in the others too.
	Unprotected uint64
	// Kept is the records Shutdown left unsent in the spool, for the next
	// start or zaplens-ship: those it could not deliver, or had no time
	// to. They are counted as failed or queued too.
	Kept uint64
	// Recovered is the records found unsent in the spool files of
	// processes that ended, which this provider sends; they are not in
	// Emitted.
	Recovered uint64
	// RecoveredExported is those of Recovered the collector acknowledged.
	RecoveredExported uint64
	// RecoveredFailed is those of Recovered the collector rejected. The
	// rest, when the collector could not be reached, stay in their files
	// for a later start.
	RecoveredFailed uint64
	// Torn is the frames of those files skipped as torn (a write cut short
	// by the process's death) or corrupt.
	Torn uint64
	// SpoolLost is the records of Failed whose only copy was in a spool
	// file that was cut or failed under the process: the queue had left
	// them to it, and no one can send them any more.
	SpoolLost uint64
	// RecoveredLost is the records the spool files of processes that
	// ended counted but no longer held (files cut short under their
	// writer), or held and lost to a cut while this provider sent them.
	// They are not in Recovered.
	RecoveredLost uint64
}

// Lost is the records that will never be delivered: Dropped + Failed.
func (s Stats) Lost() uint64 { return s.Dropped + s.Failed }

// String formats the counts on one line, for the loss report.
func (s Stats) String() string {
	return fmt.Sprintf("emitted %d, exported %d, dropped %d, failed %d, queued %d",
		s.Emitted, s.Exported, s.Dropped, s.Failed, s.Queued)
}

// statsOf reads the pipeline's counts, which it keeps under one lock so
// that they add up at every moment.
func statsOf(c pipeline.Counts) Stats {
	return Stats{Emitted: c.Emitted, Exported: c.Exported, Dropped: c.Dropped, Failed: c.Failed, Queued: c.Queued, Cut: c.Cut,
		Unprotected: c.Unprotected, SpoolLost: c.JournalLost}
}
