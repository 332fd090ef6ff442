package otlplog

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Loss is one report of records lost: those dropped or failed in the last
// interval, the totals so far, and the latest export error.
type Loss struct {
	Interval time.Duration // the span the deltas cover
	Dropped  uint64        // dropped in the interval
	Failed   uint64        // failed in the interval
	Totals   Stats         // counts since the provider started
	Err      error         // the latest export error, if any; never holds header values
	ErrAt    time.Time     // when Err happened
	Final    bool          // the report made at Shutdown, with lifetime totals

	// SpoolLost is the part of Failed lost with a spool file cut or
	// failing under the process, in the interval.
	SpoolLost uint64
}

// String is the report's one line, as written to stderr by default. The
// final one is the tally of [DeliveryError], without its last export
// error: that error was told on the loss writer when it first happened, and
// Shutdown returns it, so that a program that prints Shutdown's error does
// not show the same sentence twice, and one that does not still sees the
// tally.
func (l Loss) String() string {
	if l.Final {
		return tally(l.Totals)
	}
	return fmt.Sprintf("zaplens: %s lost in the last %s (%d dropped because the queue was full, %s); lifetime totals: %s%s",
		logRecords(l.Dropped+l.Failed), l.Interval.Round(time.Millisecond), l.Dropped, failedWhy(l.Failed, l.SpoolLost), l.Totals, lastError(l.Err, l.ErrAt))
}

// failedWhy says why failed records failed: an export, or a spool file
// that held their only copy.
func failedWhy(failed, spoolLost uint64) string {
	why := fmt.Sprintf("%d failed to export", failed-spoolLost)
	if spoolLost > 0 {
		why += fmt.Sprintf(", %d lost with a spool file cut or failing under the process", spoolLost)
	}
	return why
}

// tally says how many records were not delivered over the provider's life
// and why, naming only the reasons that apply.
func tally(s Stats) string {
	var why []string
	if s.Dropped > 0 {
		why = append(why, fmt.Sprintf("%d dropped because the queue was full", s.Dropped))
	}
	if s.Failed > 0 {
		why = append(why, failedWhy(s.Failed, s.SpoolLost))
	}
	if s.Queued > 0 {
		why = append(why, fmt.Sprintf("%d still queued at shutdown", s.Queued))
	}
	kept := ""
	if s.Kept > 0 {
		kept = fmt.Sprintf("; %d of them kept in the spool for the next start", s.Kept)
	}
	n := s.Lost() + s.Queued
	verb := "were"
	if n == 1 {
		verb = "was"
	}
	return fmt.Sprintf("zaplens: %d of %s %s not delivered (%s)%s", n, logRecords(s.Emitted), verb, strings.Join(why, ", "), kept)
}

// logRecords is n log records, in words.
func logRecords(n uint64) string {
	if n == 1 {
		return "1 log record"
	}
	return fmt.Sprintf("%d log records", n)
}

func lastError(err error, at time.Time) string {
	switch {
	case err == nil:
		return ""
	case at.IsZero():
		return "; last export error: " + err.Error()
	}
	return fmt.Sprintf("; last export error, at %s: %s", at.Format("15:04:05"), err)
}

// reporter tells losses once per interval, from its own goroutine and
// straight to a writer or callback: it must not go through the pipeline
// whose losses it reports, and must never speak once per record. Every
// line for the loss writer, whoever says it, is written by that goroutine,
// in order: a writer that blocks (a full pipe, a stopped terminal) must
// hold up no export, so that lines past maxQueuedLines are dropped and
// counted rather than waited for.
type reporter struct {
	p            *LoggerProvider
	interval     time.Duration
	report       func(Loss)
	write        func(string) // a line to the loss writer; nil when reports are off
	lines        chan string  // to write, in order; nil when reports are off
	droppedLines atomic.Uint64
	toldDropped  uint64   // of droppedLines, those told; the goroutine's
	warned       sync.Map // transport.Cause -> struct{}: each warned once
	stop         chan struct{}
	done         chan struct{}
	once         sync.Once
	last         Stats          // touched by the reporter goroutine, then by close
	final        *DeliveryError // set by close before the goroutine reads it; nil: nothing lost
	lastAt       time.Time
}

// maxQueuedLines bounds the lines waiting for the loss writer: far more
// than a provider says in a burst (a warning per cause, a loss per
// interval), few enough that a stuck writer costs little memory.
const maxQueuedLines = 64

// newReporter makes the reporter, which takes lines at once and writes
// them once started.
func newReporter(p *LoggerProvider, c *providerConfig) *reporter {
	r := &reporter{
		p:        p,
		interval: c.reportInterval,
		report:   c.report,
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
		lastAt:   time.Now(),
	}
	if r.interval <= 0 {
		r.interval = DefaultReportInterval
	}
	r.write = lossLine(c)
	if r.write != nil {
		r.lines = make(chan string, maxQueuedLines)
	}
	switch {
	case r.report != nil:
	case r.write == nil:
		r.report = func(Loss) {}
	default:
		r.report = func(l Loss) { r.writeLine(l.String()) }
	}
	return r
}

// start tells the configuration's warnings, then runs the reporter's
// goroutine, once the pipeline whose counts it reads is built.
func (r *reporter) start(warnings []string) {
	for _, w := range warnings {
		r.say("zaplens: " + w)
	}
	go r.run()
}

// say queues one line for the loss writer, if there is one, and returns at
// once: it is called on the export path.
func (r *reporter) say(line string) {
	if r.lines == nil {
		return
	}
	select {
	case r.lines <- line:
	default:
		r.droppedLines.Add(1)
	}
}

// writeLine writes one line, on the reporter's goroutine, then tells the
// lines dropped meanwhile once the queue has room again.
func (r *reporter) writeLine(line string) {
	r.write(line)
	if n := r.droppedLines.Load(); n > r.toldDropped && len(r.lines) == 0 {
		r.write(fmt.Sprintf("zaplens: %d messages to this writer were dropped: it did not keep up", n-r.toldDropped))
		r.toldDropped = n
	}
}

// warnOnce tells the first export failure of each cause at once, rather
// than at the next interval, so that a misconfiguration shows before any
// retry has run out.
func (r *reporter) warnOnce(cause any, err error) {
	if _, seen := r.warned.LoadOrStore(cause, struct{}{}); !seen {
		r.say("zaplens: " + err.Error())
	}
}

func (r *reporter) run() {
	defer close(r.done)
	t := time.NewTicker(r.interval)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			r.drain()
			r.reportFinal()
			return
		case line := <-r.lines:
			r.writeLine(line)
		case <-t.C:
			r.tick()
		}
	}
}

// drain writes the lines queued before the final report, which comes last.
func (r *reporter) drain() {
	for {
		select {
		case line := <-r.lines:
			r.writeLine(line)
		default:
			return
		}
	}
}

// tick reports what was lost since the last tick, if anything.
func (r *reporter) tick() {
	if r.p.pipe == nil {
		return // a void provider tells its drops itself
	}
	now := r.p.Stats()
	l := Loss{
		Interval: time.Since(r.lastAt),
		Dropped:  now.Dropped - r.last.Dropped,
		Failed:   now.Failed - r.last.Failed,
		Totals:   now,
	}
	l.ErrAt, l.Err = r.p.pipe.LastFailure()
	l.SpoolLost = now.SpoolLost - r.last.SpoolLost
	if n := now.Unprotected - r.last.Unprotected; n > 0 {
		// The spool said why when it happened; this says how many, while
		// it lasts.
		r.say(fmt.Sprintf("zaplens: spool: %s went on without crash protection in the last %s (%d since the start)",
			logRecords(n), l.Interval.Round(time.Millisecond), now.Unprotected))
	}
	r.last, r.lastAt = now, time.Now()
	if l.Dropped+l.Failed > 0 {
		r.safeReport(l)
	}
}

// finalReportGrace is how long past Shutdown's deadline the final report
// may take: long enough for a line on stderr, short enough that a slow
// writer or callback does not hold Shutdown up.
const finalReportGrace = 100 * time.Millisecond

// close stops the ticks, which makes the final report of what Shutdown
// returns, and waits for it until ctx is done, and a grace after.
func (r *reporter) close(ctx context.Context, final *DeliveryError) {
	r.once.Do(func() {
		r.final = final
		close(r.stop)
	})
	select {
	case <-r.done:
	case <-ctx.Done():
		select {
		case <-r.done:
		case <-time.After(finalReportGrace):
		}
	}
}

// report reports, on the reporter's goroutine, what was not delivered over
// the provider's life, if anything: Shutdown's own error, read once, so
// that the two agree.
func (r *reporter) reportFinal() {
	de := r.final
	if de == nil {
		return
	}
	r.safeReport(Loss{
		Interval:  time.Since(r.lastAt),
		Dropped:   de.Stats.Dropped - r.last.Dropped,
		Failed:    de.Stats.Failed - r.last.Failed,
		SpoolLost: de.Stats.SpoolLost - r.last.SpoolLost,
		Totals:    de.Stats,
		Err:       de.Err,
		ErrAt:     de.ErrAt,
		Final:     true,
	})
}

// safeReport keeps a panicking user callback from killing the program: the
// report is a courtesy, never a reason to crash.
func (r *reporter) safeReport(l Loss) {
	defer func() { _ = recover() }()
	r.report(l)
}
