package zaplens

import (
	"context"
	"fmt"
	"os"
	"sync"
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
	Final    bool          // the report made at Shutdown, with lifetime totals
}

// String is the report's one line, as written to stderr by default.
func (l Loss) String() string {
	what := fmt.Sprintf("zaplens: %d log records lost in the last %s (%d dropped, queue full; %d failed export)",
		l.Dropped+l.Failed, l.Interval.Round(time.Millisecond), l.Dropped, l.Failed)
	if l.Final {
		what = fmt.Sprintf("zaplens: at shutdown, %d log records were not delivered", l.Totals.Lost()+l.Totals.Queued)
	}
	line := what + "; totals: " + l.Totals.String()
	if l.Err != nil {
		line += "; last export error: " + l.Err.Error()
	}
	return line
}

// reporter tells losses once per interval, from its own goroutine and
// straight to a writer or callback: it must not go through the pipeline
// whose losses it reports, and must never speak once per record.
type reporter struct {
	p        *LoggerProvider
	interval time.Duration
	report   func(Loss)
	write    func(string) // a line to the loss writer; nil when reports are off
	warned   sync.Map     // transport.Cause -> struct{}: each warned once
	stop     chan struct{}
	done     chan struct{}
	once     sync.Once
	last     Stats // touched by the reporter goroutine, then by close
	lastAt   time.Time
}

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
	if !c.reportOff {
		w := c.reportWriter
		if w == nil {
			w = os.Stderr
		}
		r.write = func(line string) { fmt.Fprintln(w, line) }
	}
	switch {
	case r.report != nil:
	case r.write == nil:
		r.report = func(Loss) {}
	default:
		r.report = func(l Loss) { r.write(l.String()) }
	}
	for _, w := range c.warnings {
		r.say("zaplens: " + w)
	}
	go r.run()
	return r
}

// say writes one line to the loss writer, if there is one.
func (r *reporter) say(line string) {
	if r.write != nil {
		r.write(line)
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
			r.final()
			return
		case <-t.C:
			r.tick()
		}
	}
}

// tick reports what was lost since the last tick, if anything.
func (r *reporter) tick() {
	now := r.p.Stats()
	l := Loss{
		Interval: time.Since(r.lastAt),
		Dropped:  now.Dropped - r.last.Dropped,
		Failed:   now.Failed - r.last.Failed,
		Totals:   now,
		Err:      r.p.pipe.LastError(),
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

// close stops the ticks, which makes the final report, and waits for it
// until ctx is done, and a grace after.
func (r *reporter) close(ctx context.Context) {
	r.once.Do(func() { close(r.stop) })
	select {
	case <-r.done:
	case <-ctx.Done():
		select {
		case <-r.done:
		case <-time.After(finalReportGrace):
		}
	}
}

// final reports, on the reporter's goroutine, what was not delivered over
// the provider's life, if anything.
func (r *reporter) final() {
	now := r.p.Stats()
	if now.Lost()+now.Queued > 0 {
		r.safeReport(Loss{
			Interval: time.Since(r.lastAt),
			Dropped:  now.Dropped - r.last.Dropped,
			Failed:   now.Failed - r.last.Failed,
			Totals:   now,
			Err:      r.p.pipe.LastError(),
			Final:    true,
		})
	}
}

// safeReport keeps a panicking user callback from killing the program: the
// report is a courtesy, never a reason to crash.
func (r *reporter) safeReport(l Loss) {
	defer func() { _ = recover() }()
	r.report(l)
}
