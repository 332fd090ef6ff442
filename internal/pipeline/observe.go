package pipeline

import "errors"

// Observation is what the pipeline's metrics report, read at one moment
// under the lock that keeps the counts, so that it adds up as they do:
//
//	Emitted  = HandedOn + Dropped + Waiting
//	HandedOn = Exported + Failed + InFlight
//	Queued   = Waiting + InFlight
type Observation struct {
	Counts
	Waiting  uint64 // in the queue, or spilled to the journal's files, and never taken by an export
	InFlight uint64 // taken by an export not yet answered, or put back for want of an answer
	HandedOn uint64 // taken from the queue by an export, answered or not
	// DroppedStopped is the part of Dropped refused because the pipeline
	// was stopped; the rest found the queue full.
	DroppedStopped uint64
	// Capacity is how many records the queue holds when full: at the mean
	// size of the records waiting (of those handed on when none waits, or
	// NominalRecordBytes before any), how many fit in MaxQueueBytes; when
	// MaxQueueRecords is set, at most that bound less the records in
	// flight, which it counts too. Waiting/Capacity is how full it is.
	Capacity uint64
	// FailedBy splits Failed by the type of error that failed the records.
	FailedBy []TypeCount
}

// TypeCount is a count of records failed by one type of error.
type TypeCount struct {
	Type string
	N    uint64
}

// OtherErrorType is the error type of an error that does not tell its
// own, as the semantic conventions' error.type has it.
const OtherErrorType = "_OTHER"

// NominalRecordBytes is the size assumed of a record, in the queue with
// its header, before any record has been seen.
const NominalRecordBytes = 200

// observed is what the counts do not hold but the metrics need, kept
// under the pipeline's lock.
type observed struct {
	droppedStopped uint64
	takenBytes     uint64 // queue bytes of the records handed on
	failedBy       []TypeCount
}

// fail counts n records failed by err, by its type.
func (o *observed) fail(err error, n int) {
	if n <= 0 {
		return
	}
	t := ErrorType(err)
	for i := range o.failedBy {
		if o.failedBy[i].Type == t {
			o.failedBy[i].N += uint64(n)
			return
		}
	}
	o.failedBy = append(o.failedBy, TypeCount{Type: t, N: uint64(n)})
}

// ErrorType is the type an error tells by an ErrorType method, in it or
// in its chain (as go.opentelemetry.io/otel/semconv reads it), or
// OtherErrorType.
func ErrorType(err error) string {
	var et interface{ ErrorType() string }
	if err != nil && errors.As(err, &et) {
		if t := et.ErrorType(); t != "" {
			return t
		}
	}
	return OtherErrorType
}

// Observe reads the observation into o, reusing o.FailedBy.
func (p *Pipeline) Observe(o *Observation) {
	p.mu.Lock()
	defer p.mu.Unlock()
	// An export put back for want of an answer keeps its records handed
	// on, and in flight: they wait for its next attempt.
	*o = Observation{
		Counts:         p.countsLocked(),
		Waiting:        p.enqueued() - p.handedOn,
		InFlight:       p.handedOn - p.settled(),
		HandedOn:       p.handedOn,
		DroppedStopped: p.obs.droppedStopped,
		FailedBy:       append(o.FailedBy[:0], p.obs.failedBy...),
	}
	o.Capacity = p.capacity(o.HandedOn, o.InFlight)
}

// capacity works out Observation.Capacity, under the lock.
func (p *Pipeline) capacity(handedOn, inFlight uint64) uint64 {
	mean := float64(NominalRecordBytes)
	switch {
	case p.q.records > 0:
		mean = float64(p.q.bytes) / float64(p.q.records)
	case handedOn > 0 && p.obs.takenBytes > 0:
		mean = float64(p.obs.takenBytes) / float64(handedOn)
	}
	c := uint64(float64(max(p.cfg.MaxQueueBytes, 0)) / mean)
	if p.cfg.MaxQueueRecords > 0 {
		bound := uint64(p.cfg.MaxQueueRecords)
		c = min(c, bound-min(inFlight, bound))
	}
	return c
}
