package pipeline

import (
	"context"

	"github.com/zaplens/zaplens/internal/otlpwire"
)

// A Journal keeps a copy of every record the pipeline accepts outside the
// process's memory, from before the logging call returns until the record
// is settled, so that another process can send what this one could not if
// it dies. The spool (internal/spool) is one. Every method but Close is
// called with the pipeline's lock held, in the order of the records: it
// must not wait on the disk, and may wait at most a few milliseconds, once,
// for anything else.
type Journal interface {
	// AddScope tells the encoded scope of number i, before any record of it.
	AddScope(i int, s otlpwire.Scope)
	// Append copies an accepted record, of the scope numbered scope.
	Append(scope int, rec []byte) Verdict
	// Settle tells the fate of the n oldest records whose fate it was not
	// told yet, all of one export. Without keep they are settled: the
	// collector acknowledged them, or refused them for good. With keep no
	// collector answered for them (it was down, slow, or the export was cut
	// short): the journal keeps them for a later process to send, whatever
	// happens to the records after them.
	Settle(n int, keep bool)
	// Replay adds to req, oldest first, the records numbered from on (the
	// first record accepted is 0), up to max of them and as many as req's
	// bound takes, reading them back from where the journal keeps them:
	// the pipeline spilled them there. It returns how many records it went
	// through, and how many of those it does not hold (they went on in
	// memory only, or their file failed): those are not added. req reads
	// the journal's memory in place until Settle or Close. Replay reads
	// every page of what it adds: a request whose copy faults all the same
	// (its file cut or failing since) is read back again, at once, and the
	// journal finds the records it lost then.
	Replay(from uint64, req *otlpwire.Request, max int) (n, missing int)
	// Close ends the journal, by ctx's deadline; it is called once, when the
	// pipeline has stopped or given up waiting for its exporter, and
	// without the pipeline's lock: it may wait on the disk. Records it
	// still holds unsettled stay for a later process.
	Close(ctx context.Context)
}

// Verdict is what a journal did with a record.
type Verdict uint8

const (
	// Journaled: the record is copied.
	Journaled Verdict = iota
	// Unjournaled: the journal stepped aside (a full disk, say); the record
	// goes on in memory only, and is counted as Unprotected.
	Unjournaled
	// JournalFull: the journal is at its bound; the record is dropped, and
	// counted as a full queue's are.
	JournalFull
)

// CloseJournal closes the journal, if any, once, by ctx's deadline.
// Records settled after it are not told to it. The journal is closed
// outside the lock: once p.journal is nil under it, no call reaches the
// journal, and producers and Stats need not wait on its disk.
func (p *Pipeline) CloseJournal(ctx context.Context) {
	p.mu.Lock()
	j := p.journal
	p.journal = nil
	p.mu.Unlock()
	if j != nil {
		j.Close(ctx)
	}
}
