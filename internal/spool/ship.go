package spool

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/zaplens/zaplens/internal/otlpwire"
	"github.com/zaplens/zaplens/internal/pipeline"
	"github.com/zaplens/zaplens/internal/retry"
)

// ShipConfig is a shipper's: where to look, and how to send.
type ShipConfig struct {
	Dir  string
	Skip string // the prefix of this process's own files, if any
	// Export sends a request, as the pipeline's exporter does; it may be
	// called while the pipeline exports too.
	Export          pipeline.ExportFunc
	MaxBatchRecords int
	MaxRequestBytes int
	ExportTimeout   time.Duration
	// Say tells one line: how many records were found, a file left unread,
	// a request refused for good. Nil: nowhere.
	Say func(string)
	// Once makes one pass and stops at the first failed export (the ship
	// command); otherwise a failed export is tried again, backing off, until
	// Stop.
	Once bool
}

// ShipCounts are a shipper's counts so far.
type ShipCounts struct {
	Processes uint64 // processes whose files were taken
	Files     uint64 // files taken
	Found     uint64 // records found unsent in them
	Exported  uint64 // of those, acknowledged by the collector
	Rejected  uint64 // of those, rejected by the collector: not sent again
	Torn      uint64 // torn or corrupt frames skipped, and files not readable as spool files
	Lost      uint64 // records a file's header counts that are neither found nor settled (it was cut short under its writer), or found and cut off before they were sent: not in Found
	Unread    uint64 // files left as they are: of a newer format, or failing to read
}

// Left is the records found and not settled yet: still to send, or left
// in their files when the shipper stopped.
func (c ShipCounts) Left() uint64 { return c.Found - c.Exported - c.Rejected }

// Shipper sends what processes that ended left in a spool directory: it
// takes each such file with a lock, so that no two processes send one, and
// sends its unsettled records with the resource and scopes they were
// written with, marking them settled as the collector acknowledges them.
type Shipper struct {
	cfg ShipConfig

	mu      sync.Mutex
	counts  ShipCounts
	claimed []string
	err     error // the directory could not be read, or the latest failed export or sending of a file
	unread  error // why the first file left unread was

	ctx      context.Context
	cancel   context.CancelFunc
	stopping chan struct{} // closed by Stop: a last pass, each export tried once
	stopOnce sync.Once
	done     chan struct{}
}

// Ship starts a shipper on cfg.Dir, in the background.
func Ship(cfg ShipConfig) *Shipper {
	ctx, cancel := context.WithCancel(context.Background())
	sh := &Shipper{cfg: cfg, ctx: ctx, cancel: cancel,
		stopping: make(chan struct{}), done: make(chan struct{})}
	go sh.run()
	return sh
}

// Counts returns the counts so far.
func (sh *Shipper) Counts() ShipCounts {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return sh.counts
}

// Err is why the directory could not be read, or the latest failed export
// or sending of a file; a file left unread is UnreadErr's.
func (sh *Shipper) Err() error {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return sh.err
}

// UnreadErr is why the first file left unread (counted in Unread) was.
func (sh *Shipper) UnreadErr() error {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return sh.unread
}

// Claimed names the files this shipper took, in the order it took them.
func (sh *Shipper) Claimed() []string {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return slices.Clone(sh.claimed)
}

// Done is closed when the shipper has sent everything it took, or stopped.
func (sh *Shipper) Done() <-chan struct{} { return sh.done }

// Stop makes the shipper try what is left once more, each export once, and
// waits for it until ctx is done; then it cancels the export in flight.
// Files not all sent stay, unlocked, for a later process.
func (sh *Shipper) Stop(ctx context.Context) {
	sh.stopOnce.Do(func() { close(sh.stopping) })
	select {
	case <-sh.done:
		return
	case <-ctx.Done():
	}
	sh.cancel()
	select {
	case <-sh.done:
	case <-time.After(time.Second): // an export that does not heed its context
	}
}

// orphan is a file of a process that ended, locked by this one.
type orphan struct {
	name string
	path string
	fd   int
	segmentName
	first  uint64 // its header's number of its first record: see sortOrphans
	unsent uint64 // the records count found unsent in it: see readCut

	// The file is read once, mapped, from the count to the shipping. What
	// parse finds in it is not kept between them: about 32 bytes a record,
	// for every file of every process that ended, would stay in the heap
	// through an outage of the collector; the mapping costs no heap, and
	// parsing it again when the file's turn comes reads nothing.
	mem []byte // the file, mapped
}

func (sh *Shipper) run() {
	defer close(sh.done)
	defer sh.cancel()
	orphans, err := sh.claim()
	if err != nil {
		sh.setErr(err)
	}
	orphans = sh.count(orphans)
	for i := range orphans {
		if !sh.ship(&orphans[i]) {
			for j := i + 1; j < len(orphans); j++ {
				orphans[j].close() // not a copy: no pointer into its mapping is left
			}
			return
		}
	}
}

// claim takes every spool file of a process that ended: one that no live
// process holds locked. It removes the files a process died making.
func (sh *Shipper) claim() ([]orphan, error) {
	if err := checkDir(sh.cfg.Dir); err != nil {
		return nil, err
	}
	entries, err := listDir(sh.cfg.Dir)
	if err != nil {
		return nil, err
	}
	var out []orphan
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() {
			continue
		}
		if sh.cfg.Skip != "" && (strings.HasPrefix(name, sh.cfg.Skip) || strings.HasPrefix(name, "."+sh.cfg.Skip)) {
			continue
		}
		if strings.HasPrefix(name, ".") && strings.HasSuffix(name, ".seg.tmp") {
			sh.removeStale(name)
			continue
		}
		n, ok := parseName(name)
		if !ok {
			continue
		}
		path := filepath.Join(sh.cfg.Dir, name)
		fd, ok := lockFile(path)
		if !ok {
			continue
		}
		out = append(out, orphan{name: name, path: path, fd: fd, segmentName: n})
	}
	sortOrphans(out)
	sh.mu.Lock()
	for _, o := range out {
		sh.claimed = append(sh.claimed, o.name)
	}
	sh.mu.Unlock()
	return out, nil
}

// sortOrphans puts files in the order they are sent: processes by their
// start, and one process's files by the number of their first record, as
// their headers give it once count has read them (see format.go), then by
// name.
func sortOrphans(out []orphan) {
	// sort.Slice, not slices.SortFunc: a struct type of our own would
	// instantiate slices' sort again, 17 KB of code (benchmarks/binsize).
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		return cmp.Or(cmp.Compare(a.created, b.created), strings.Compare(a.prefix, b.prefix),
			cmp.Compare(a.first, b.first), cmp.Compare(a.seq, b.seq)) < 0
	})
}

// listDir is os.ReadDir; a test swaps a file between the listing and the
// open.
var listDir = os.ReadDir

// staleAge is the age past which a file being made is taken for one whose
// maker died, even when its process id is in use.
const staleAge = time.Minute

// removeStale removes a file a process was making, or emptying for reuse,
// when it died: it holds nothing to send. A live process's such file is
// locked, but only from a moment after it is created: one whose maker is
// alive and that is young is not touched, not even to try the lock, so as
// not to make the maker's own lock fail.
func (sh *Shipper) removeStale(name string) {
	path := filepath.Join(sh.cfg.Dir, name)
	n, ok := parseName(strings.TrimSuffix(strings.TrimPrefix(name, "."), ".tmp"))
	alive := !ok || syscall.Kill(n.pid, 0) != syscall.ESRCH
	if info, err := os.Lstat(path); err != nil || (alive && time.Since(info.ModTime()) < staleAge) {
		return
	}
	if fd, ok := lockFile(path); ok {
		syscall.Unlink(path)
		syscall.Close(fd)
	}
}

// lockFile opens path and takes its lock without waiting; it fails when a
// live process holds it, when the file was removed meanwhile (another
// process sent it all), and when it is not a regular file of this user's,
// a symbolic link included: the listing's word on it may be stale.
func lockFile(path string) (int, bool) {
	fd, err := syscall.Open(path, syscall.O_RDWR|syscall.O_CLOEXEC|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return -1, false
	}
	if err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		syscall.Close(fd)
		return -1, false
	}
	if st, ok := ownFile(fd); !ok || st.Nlink == 0 {
		syscall.Close(fd)
		return -1, false
	}
	return fd, true
}

// count reads each file taken and tells how many records they hold unsent.
// It returns the files it could read; it lets the others go, with their
// error, rather than leave them to the sending: one that could be read
// there would send records the count never found.
func (sh *Shipper) count(orphans []orphan) []orphan {
	var found, torn, lost uint64
	procs := map[string]bool{}
	readable := orphans[:0]
	for _, o := range orphans {
		procs[o.prefix] = true
		c, err := o.read(false)
		switch {
		case err != nil:
			sh.letGo(&o, err)
			continue
		case c == nil:
			torn++
		default:
			found += c.unsent
			torn += uint64(c.torn)
			lost += sh.tellLost(&o, c)
			o.first, o.unsent = c.first, c.unsent
		}
		readable = append(readable, o)
	}
	sortOrphans(readable)
	sh.mu.Lock()
	sh.counts.Processes = uint64(len(procs))
	sh.counts.Files = uint64(len(orphans))
	sh.counts.Found = found
	sh.counts.Torn = torn
	sh.counts.Lost = lost
	sh.counts.Unread = uint64(len(orphans) - len(readable))
	sh.mu.Unlock()
	if sh.cfg.Say != nil && (found > 0 || torn > 0 || lost > 0) {
		line := fmt.Sprintf("zaplens: spool %s: found %d log records unsent by %s that ended (%s)",
			sh.cfg.Dir, found, Plural(len(procs), "process", "processes"), Plural(len(orphans), "file", "files"))
		if torn > 0 {
			line += fmt.Sprintf("; %d torn or corrupt frames skipped", torn)
		}
		if lost > 0 {
			line += fmt.Sprintf("; %d lost with files cut short", lost)
		}
		if !sh.cfg.Once {
			line += "; sending them in the background"
		}
		sh.cfg.Say(line)
	}
	return readable
}

// tellLost says, once, how many records o lost, and returns that count:
// records its header counts that it no longer holds. Its writer, if it
// saw the fault, counted those it read back missing as failed, and
// settled them: they are not counted here again.
func (sh *Shipper) tellLost(o *orphan, c *contents) uint64 {
	n := c.lost()
	if n > 0 && sh.cfg.Say != nil {
		sh.cfg.Say(fmt.Sprintf("zaplens: spool %s: %s is cut short (%d bytes of %d): %d log records its header counts were neither found nor delivered, and are lost with the pages they were on",
			sh.cfg.Dir, o.name, len(o.mem), c.size, n))
	}
	return n
}

// letGo lets o go unread, and says so: its records are not counted as
// found, and would otherwise pass without a word.
func (sh *Shipper) letGo(o *orphan, err error) {
	o.close()
	sh.tellLeft(o, "unread", err)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.unread == nil {
		sh.unread = fmt.Errorf("spool %s: %w", o.path, err)
	}
}

// tellLeft says why o is left as it is.
func (sh *Shipper) tellLeft(o *orphan, how string, err error) {
	if sh.cfg.Say != nil {
		sh.cfg.Say(fmt.Sprintf("zaplens: spool %s: %s left as it is, %s: %v", sh.cfg.Dir, o.name, how, err))
	}
}

// read maps the file, once, and parses it, keeping the records with keep;
// the contents are nil for a file that is no spool file.
func (o *orphan) read(keep bool) (*contents, error) {
	if o.mem == nil {
		mem, err := readFile(o.fd)
		if err != nil {
			return nil, err
		}
		o.mem = mem
	}
	var c *contents
	var perr error
	if err := guardFault(func() { c, perr = parse(o.mem, keep) }); err != nil {
		return nil, err
	}
	if errors.Is(perr, errNewerVersion) {
		return nil, perr
	}
	return c, nil
}

// readFile is mapFile; a test counts the reads through it.
var readFile = mapFile

// mapFile maps a file to read. Mapped, not copied into the heap: what the
// count read is kept until it is sent, maybe through a long outage of the
// collector, and in the page cache the kernel can take it back when
// memory is short, and read it again when it is sent.
func mapFile(fd int) ([]byte, error) {
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, err
	}
	if st.Size == 0 {
		return nil, nil // mmap refuses an empty file; parse, not this, refuses it
	}
	return syscall.Mmap(fd, 0, int(st.Size), syscall.PROT_READ, syscall.MAP_SHARED)
}

// close lets the file go: its mapping, and its lock.
func (o *orphan) close() {
	if o.mem != nil {
		syscall.Munmap(o.mem)
	}
	syscall.Close(o.fd)
	o.mem = nil
}

// ship sends one file's unsettled records and removes it. It reports false
// when it stopped with records left: the file stays, and its lock is let go.
func (sh *Shipper) ship(o *orphan) bool {
	defer o.close()
	c, err := o.read(true)
	if err != nil {
		// Cut since count mapped it, while it waited its turn: read
		// again as the cut left it, as when it is cut while sent.
		if now := sh.readCut(o, o.unsent, 0); now != nil {
			c, err = now, nil
		}
	}
	sent := false
	switch {
	case err != nil:
	case c == nil:
		sent = true // not a spool file at all: nothing in it can be sent
	default:
		sent, err = sh.send(o, c)
	}
	if err != nil {
		// Its records were counted as found: they stay in Left, and the
		// line says why.
		sh.setErr(fmt.Errorf("spool %s: %w", o.path, err))
		sh.tellLeft(o, "its records unsent", err)
		return true
	}
	if sent {
		syscall.Unlink(o.path)
	}
	return sent
}

// send exports the file's unsettled records, marking them settled as the
// collector acknowledges them, and reports whether it sent them all.
func (sh *Shipper) send(o *orphan, c *contents) (bool, error) {
	settled := min(c.settled, uint64(len(c.records)))
	var req otlpwire.Request // per file: it points into the mapping
	failures := 0            // in a row: the backoff's step
	for settled < uint64(len(c.records)) {
		n, next := sh.fill(&req, c, settled)
		exported, rejected, ok := n, 0, true
		if n > 0 {
			var body []byte
			if err := guardFault(func() { body = req.Bytes() }); err != nil {
				if c = sh.readCut(o, unsentFrom(c, settled), settled); c == nil {
					return false, err
				}
				continue // what the cut left, read again
			}
			exported, rejected, ok = sh.export(o.name, settled, body, n)
		}
		if !ok {
			if sh.cfg.Once || sh.final() || sh.ctx.Err() != nil || !retryWait(sh, shipBackoff.Delay(failures)) {
				return false, nil
			}
			failures++
			continue
		}
		failures = 0
		settled = next
		// Not written into a file cut short of its header: the next
		// request's copy faults, and readCut counts the loss. A write that
		// fails otherwise costs, at worst, a later process's sending these
		// again, if this one dies before it removes the file.
		_ = writeSettled(o.fd, settled)
		sh.mu.Lock()
		sh.counts.Exported += uint64(exported)
		sh.counts.Rejected += uint64(rejected)
		sh.mu.Unlock()
	}
	return true, nil
}

// readCut reads o again when it was cut short since it was mapped: a read
// of it faulted, as it waited its turn or as it was sent. Of the records
// found unsent in it from the from-th on, had, those the cut took are lost
// for anyone: they move from Found to Lost, and it is told, as a later
// process would tell it from the header, which the cut may have taken too.
// It returns the file as it is now, or nil when o was not cut (a page
// failing to read): then its records stay, left for a later try.
func (sh *Shipper) readCut(o *orphan, had, from uint64) *contents {
	var st syscall.Stat_t
	if syscall.Fstat(o.fd, &st) != nil || st.Size >= int64(len(o.mem)) {
		return nil
	}
	size := len(o.mem)
	syscall.Munmap(o.mem)
	o.mem = nil
	now, err := o.read(true)
	switch {
	case err != nil:
		return nil
	case now == nil:
		now = &contents{} // no header left: nothing more to send
	}
	// From the header's count on, too: those before it need no sending.
	lost := had - min(had, unsentFrom(now, max(from, now.settled)))
	sh.mu.Lock()
	sh.counts.Found -= lost
	sh.counts.Lost += lost
	sh.mu.Unlock()
	if sh.cfg.Say != nil {
		sh.cfg.Say(fmt.Sprintf("zaplens: spool %s: %s was cut short while it was sent (%d bytes of %d): %d log records found in it were not sent yet, and are lost with the pages they were on",
			sh.cfg.Dir, o.name, st.Size, size, lost))
	}
	return now
}

// unsentFrom is how many of c's records from the from-th on are to send.
func unsentFrom(c *contents, from uint64) (n uint64) {
	for i := from; i < uint64(len(c.records)); i++ {
		if c.records[i].payload != nil {
			n++
		}
	}
	return n
}

// export sends one request and reports what the collector did with it; ok
// is false when no collector answered for the records: they are to be
// tried again. A request it refused for good (HTTP 400) is settled as
// rejected, so that it does not block the records after it.
func (sh *Shipper) export(file string, from uint64, body []byte, n int) (exported, rejected int, ok bool) {
	rejected, err := sh.cfg.Export.Call(sh.ctx, sh.cfg.ExportTimeout, body, n, sh.final())
	if err != nil {
		sh.setErr(err)
		if pipeline.Unanswered(err, rejected, n) {
			return 0, 0, false
		}
		if rejected > 0 && sh.cfg.Say != nil {
			sh.cfg.Say(fmt.Sprintf("zaplens: spool %s: the collector refused %d of %d recovered log records of %s (from record %d) for good; they are counted in RecoveredFailed and not sent again: %v",
				sh.cfg.Dir, rejected, n, file, from, err))
		}
	}
	return n - rejected, rejected, true
}

// final tells whether Stop was called: each export is then tried once.
func (sh *Shipper) final() bool {
	select {
	case <-sh.stopping:
		return true
	default:
		return false
	}
}

// shipBackoff is the wait between tries of a failed export: steps of 1 s
// doubling to 30 s, each wait between half its step and the step, at
// random (the policy's ±1/3 around three quarters of it). Ranks that
// restarted together, and failed together against a collector that was
// down, do not all try again at once when it comes back, as the OTLP
// specification asks; half is kept so that no rank retries at once. Its
// steps are longer than an export's own (internal/transport): each try
// is a whole export, retried within its own bound already.
var shipBackoff = retry.Backoff{Initial: 750 * time.Millisecond, Multiplier: 2, Jitter: 1.0 / 3, Max: 22500 * time.Millisecond}

// retryWait is the wait before a failed export is tried again: a variable,
// so that a test can see the waits without taking them.
var retryWait = (*Shipper).wait

// wait sleeps d, and reports false when Stop came first: the next attempt
// is the last pass's.
func (sh *Shipper) wait(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-sh.stopping:
	}
	return sh.ctx.Err() == nil
}

func (sh *Shipper) setErr(err error) {
	sh.mu.Lock()
	sh.err = err
	sh.mu.Unlock()
}

// fill starts req with the records from the from-th on that fit one
// request, and returns how many it took and the number of the first record
// after them. A corrupt record is passed over.
func (sh *Shipper) fill(req *otlpwire.Request, c *contents, from uint64) (n int, next uint64) {
	req.Reset(c.resource, c.scopes, sh.cfg.MaxRequestBytes)
	i := from
	for ; i < uint64(len(c.records)) && req.Len() < max(sh.cfg.MaxBatchRecords, 1); i++ {
		r := c.records[i]
		if r.payload != nil && !req.Add(int(r.kind), r.payload) {
			break
		}
	}
	return req.Len(), i
}

// Plural is n and the noun in the form that goes with it.
func Plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
