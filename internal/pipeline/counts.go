package pipeline

// Counts are the outcomes of every record handed to a pipeline. They always
// add up: Emitted = Exported + Dropped + Failed + Queued.
type Counts struct {
	Emitted  uint64
	Exported uint64
	Dropped  uint64 // refused: the queue was full, or the pipeline stopped
	Failed   uint64 // in exports that failed, or rejected by the collector
	Queued   uint64 // waiting, or in an export not yet answered
	Cut      uint64 // values cut to fit a request; counted in the others too

	Unprotected uint64 // accepted without the journal's copy: it stepped aside
	JournalLost uint64 // of Failed: records whose only copy, the journal's, was lost (its file cut or failing under the process)
}
