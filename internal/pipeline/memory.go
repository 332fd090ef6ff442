package pipeline

// Memory is the pipeline's side a journal may read, from within its
// methods (under the pipeline's lock), when its copy of records is lost
// (a file cut under it): those the queue still holds can be journaled
// again, and the others are the journal's loss.
type Memory interface {
	// Queued calls f with each record the queue holds numbered from on,
	// with its number, in order, until f returns false.
	Queued(from uint64, f func(i uint64, scope int, rec []byte) bool)
	// Bare tells that the records the queue holds numbered from from on,
	// below to, have no journal copy any more: they are counted as
	// unprotected, and kept in memory until sent, never left to the
	// journal, with every record before them.
	Bare(from, to uint64)
}

// A MemoryUser is a journal that reads the pipeline's memory: New hands
// it the pipeline's.
type MemoryUser interface {
	UseMemory(Memory)
}

// memory is the pipeline's Memory.
type memory struct{ p *Pipeline }

func (m memory) Queued(from uint64, f func(i uint64, scope int, rec []byte) bool) {
	p := m.p
	i := p.next + p.deferred // the queue's first record: see spill
	p.q.each(func(scope int, rec []byte) bool {
		defer func() { i++ }()
		return i < from || f(i, scope, rec)
	})
}

func (m memory) Bare(from, to uint64) {
	p := m.p
	first := max(p.next+p.deferred, p.lastBare, from)
	if to > first {
		p.counts.Unprotected += min(to, p.enqueued()) - first
		p.lastBare = to
	}
}
