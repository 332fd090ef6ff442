package otlplog

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/zaplens/zaplens/internal/otlpwire"
	"github.com/zaplens/zaplens/internal/pipeline"
	"github.com/zaplens/zaplens/internal/spool"
)

// DefaultSpoolBytes bounds the spool files of one process (see
// [WithSpoolBytes]): with the collector away they hold what the queue has
// no room for, about two minutes of 10,000 lines a second
// (docs/spool.md).
const DefaultSpoolBytes = spool.DefaultMaxBytes

// minSpoolBytes is two files: one being filled, one ready.
const minSpoolBytes = 2 * spool.DefaultSegmentBytes

// WithSpool keeps a copy of each record in a memory-mapped file in dir from
// before the logging call returns until the collector has acknowledged it,
// overriding ZAPLENS_SPOOL_DIR; "" turns the spool off, as it is by
// default. A process that dies with records unsent, SIGKILL included,
// leaves them there, and the next provider on dir sends them, with the
// resource and timestamps they were logged with. While the collector is
// away, the files are the queue's overflow: what the queue has no room
// for, and what failed to export, waits there, and this process sends it
// when the collector is back. docs/spool.md has how, and what it costs.
func WithSpool(dir string) Option {
	return providerOptionFunc(func(c *providerConfig) { c.spool.dir.by("WithSpool", dir) })
}

// WithSpoolBytes bounds the spool files one process keeps, overriding
// ZAPLENS_SPOOL_BYTES; the default is [DefaultSpoolBytes], the least 8 MiB.
// Past it, records are dropped and counted as a full queue's are.
func WithSpoolBytes(n int) Option {
	return providerOptionFunc(func(c *providerConfig) { c.spool.bytes.by("WithSpoolBytes", n) })
}

// WithSpoolSync writes the spool's pages to the disk every d (msync),
// overriding ZAPLENS_SPOOL_SYNC (milliseconds), so that at most d of
// records is lost to a power loss or a kernel crash. The default, zero,
// leaves that to the kernel: a process's death loses nothing either way.
func WithSpoolSync(d time.Duration) Option {
	return providerOptionFunc(func(c *providerConfig) { c.spool.sync.by("WithSpoolSync", d) })
}

// spoolConfig is the spool's part of a providerConfig.
type spoolConfig struct {
	dir          setting[string]
	bytes        setting[int]
	sync         setting[time.Duration]
	segmentBytes int  // tests: smaller files
	shipOnly     bool // ShipSpool: send what the directory holds, keep no spool
}

// resolveSpool reads the spool's variables; a bad value is dealt with by
// the rule (setting.bad).
func (c *providerConfig) resolveSpool() error {
	if err := c.triage(c.readStep(stepSpool)); err != nil || c.spool.dir.value == "" {
		return err
	}
	return c.triage(c.readStep(stepSpoolFiles))
}

// openSpool opens the spool, if one is asked for, and returns it as the
// pipeline's journal. A spool that could not make its first file steps
// aside: the provider works, in memory, and NewLoggerProvider returns an
// error that names the directory, told through the loss writer too.
func (p *LoggerProvider) openSpool(c *providerConfig, res otlpwire.Resource) pipeline.Journal {
	if c.spool.dir.value == "" || c.spool.shipOnly {
		return nil
	}
	sp, err := spool.Open(spool.Config{
		Dir:          c.spool.dir.value,
		MaxBytes:     int64(c.spool.bytes.value),
		SegmentBytes: c.spool.segmentBytes,
		Sync:         c.spool.sync.value,
		Resource:     res,
		Say:          p.reporter.say,
	})
	p.spool = sp
	if err != nil {
		p.spoolErr = fmt.Errorf("spool %s: %w; logging goes on in memory, without crash protection", c.spool.dir.value, err)
		c.warnings = append(c.warnings, p.spoolErr.Error())
	}
	return sp
}

// startShipper sends, in the background, what processes that ended left in
// the spool directory, through the provider's exporter.
func (p *LoggerProvider) startShipper(c *providerConfig, export pipeline.ExportFunc) {
	if c.spool.dir.value == "" {
		return
	}
	skip := ""
	if p.spool != nil {
		skip = p.spool.Prefix()
	}
	p.shipper = spool.Ship(spool.ShipConfig{
		Dir:             c.spool.dir.value,
		Skip:            skip,
		Export:          export,
		MaxBatchRecords: c.batchSize.value,
		MaxRequestBytes: c.requestBytes.value,
		ExportTimeout:   c.exportTimeout.value,
		Say:             p.reporter.say,
		Once:            c.spool.shipOnly,
	})
}

// stopShipper starts the shipper's last pass, bounded by ctx, and returns
// a function that waits for it.
func (p *LoggerProvider) stopShipper(ctx context.Context) (wait func()) {
	if p.shipper == nil {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.shipper.Stop(ctx)
	}()
	return func() { <-done }
}

// spoolStats adds the spool's counts to s.
func (p *LoggerProvider) spoolStats(s *Stats) {
	if p.spool != nil {
		s.Kept = p.spool.Kept()
	}
	if p.shipper != nil {
		sc := p.shipper.Counts()
		s.Recovered, s.RecoveredExported, s.RecoveredFailed, s.Torn, s.RecoveredLost = sc.Found, sc.Exported, sc.Rejected, sc.Torn, sc.Lost
	}
}

// lossLine writes one line to the loss writer; nil when reports are off.
func lossLine(c *providerConfig) func(string) {
	if c.reportOff {
		return nil
	}
	w := c.reportWriter
	if w == nil {
		w = os.Stderr
	}
	return func(line string) { fmt.Fprintln(w, line) }
}

// ShipStats is what [ShipSpool] did.
type ShipStats struct {
	Processes int    // processes whose files it took
	Files     int    // files it took
	Found     uint64 // records found unsent in them
	Exported  uint64 // of those, acknowledged by the collector
	Rejected  uint64 // of those, rejected by the collector: not sent again
	Left      uint64 // of those, still in their files: the collector did not take them
	Torn      uint64 // torn or corrupt frames skipped
	Lost      uint64 // records files cut short under their writer counted but no longer held, or held and cut off before they were sent: not in Found
	Unread    int    // files left as they are: of a newer format, or failing to read
}

// String is the summary zaplens-ship prints.
func (s ShipStats) String() string {
	line := fmt.Sprintf("%d log records found in %s of %s: %d delivered, %d rejected by the collector, %d left in the spool",
		s.Found, spool.Plural(s.Files, "file", "files"), spool.Plural(s.Processes, "process", "processes"), s.Exported, s.Rejected, s.Left)
	if s.Torn > 0 {
		line += fmt.Sprintf("; %d torn or corrupt frames skipped", s.Torn)
	}
	if s.Lost > 0 {
		line += fmt.Sprintf("; %d lost with files cut short", s.Lost)
	}
	if s.Unread > 0 {
		line += fmt.Sprintf("; %s left unread", spool.Plural(s.Unread, "file", "files"))
	}
	return line
}

// ShipSpool sends what dir holds, left by processes that ended (files a
// live process holds are not touched), configured as [NewLoggerProvider]
// is, by opts, OTEL_CONFIG_FILE and the OTEL_* variables, and returns when
// done or when ctx is. Each file is taken with a lock, so that it runs safely beside
// programs starting on dir. A failed export, after the exporter's retries,
// stops it: what is left stays in dir, and the error says why. A file it
// cannot read (of a newer zaplens's format, or failing to read) stays too,
// and is an error. It is what the zaplens-ship command runs, for a job's
// epilogue.
func ShipSpool(ctx context.Context, dir string, opts ...Option) (ShipStats, error) {
	c := newProviderConfig(opts)
	c.spool.dir.put(dir)
	c.spool.shipOnly = true
	if dir == "" {
		return ShipStats{}, fmt.Errorf("zaplens: ship: no directory")
	}
	off, err := c.resolve(ctx)
	if err != nil {
		return ShipStats{}, fmt.Errorf("zaplens: ship %s: %w", dir, err)
	}
	if off {
		return ShipStats{}, fmt.Errorf("zaplens: ship %s: export is off (OTEL_SDK_DISABLED=true, OTEL_LOGS_EXPORTER=none, or no logger_provider in OTEL_CONFIG_FILE)", dir)
	}
	p, err := build(ctx, &c)
	if err != nil {
		return ShipStats{}, fmt.Errorf("zaplens: ship %s: %w", dir, err)
	}
	select {
	case <-p.shipper.Done():
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	if ctx.Err() == nil {
		sctx = ctx
	}
	_ = p.Shutdown(sctx)
	sc := p.shipper.Counts()
	s := ShipStats{Processes: int(sc.Processes), Files: int(sc.Files), Found: sc.Found,
		Exported: sc.Exported, Rejected: sc.Rejected, Left: sc.Left(), Torn: sc.Torn, Lost: sc.Lost, Unread: int(sc.Unread)}
	var errs []error
	switch err := p.shipper.Err(); {
	case s.Files == 0 && err != nil:
		errs = append(errs, err)
	case s.Left > 0 && err != nil:
		errs = append(errs, fmt.Errorf("%d log records left: %w", s.Left, err))
	case s.Left > 0:
		errs = append(errs, fmt.Errorf("%d log records left: %w", s.Left, context.Cause(ctx)))
	}
	if s.Unread > 0 {
		errs = append(errs, fmt.Errorf("%s left unread: %w", spool.Plural(s.Unread, "file", "files"), p.shipper.UnreadErr()))
	}
	if len(errs) == 0 {
		return s, nil
	}
	return s, fmt.Errorf("zaplens: ship %s: %w", dir, errors.Join(errs...))
}
