//go:build linux

package integration

// A service of the tier's fleet (see tier_test.go): a re-execution of this
// test binary that logs bursts of numbered lines, each burst one trace,
// through its own spooled pipeline to the gateway's name, until its stdin
// says stop (or the test kills it). It counts the calls that returned in a
// file it maps, as the fault harness's child does, so that a SIGKILL does
// not take the count with it.

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"

	"github.com/zaplens/zaplens"
	"github.com/zaplens/zaplens/internal/testsupport/childproc"
	"github.com/zaplens/zaplens/otlplog"
)

const tierChildEnv = "TIER_CHILD" // the child's tierChildConfig, as JSON

type tierChildConfig struct {
	Service    string // service.name
	Life       int    // 0, then 1 after a restart on the same spool
	Dir        string // its spool
	Endpoint   string // the gateway's name
	Proto      Proto
	DNS        string // the test's DNS server
	Goroutines int
	Burst      int // lines per goroutine per burst: one trace
	Pause      time.Duration
	BatchSize  int
	Progress   string // the file the child maps (faultharness_child_test.go's layout)
}

// tierChildReport is what a child stopped cleanly prints.
type tierChildReport struct {
	Logged      []uint64 // per goroutine
	Stats       otlplog.Stats
	ShutdownErr string
	CPU         time.Duration // user and system, the whole process's life
}

// tierTraceID is the trace of one burst of one goroutine of one life of a
// service: the test computes it again to find the burst's lines.
func tierTraceID(service string, life, g, burst int) trace.TraceID {
	h := sha256.Sum256(fmt.Appendf(nil, "%s/%d/%d/%d", service, life, g, burst))
	return trace.TraceID(h[:16])
}

func TestTierChild(t *testing.T) {
	var cfg tierChildConfig
	if !childproc.Config(tierChildEnv, &cfg) {
		t.Skip("a child of TestTier")
	}
	runTierChild(cfg)
}

func runTierChild(cfg tierChildConfig) {
	useTierDNS(cfg.DNS)
	words := mapProgress(cfg.Progress, cfg.Goroutines)
	p, err := otlplog.NewLoggerProvider(context.Background(),
		otlplog.WithSpool(cfg.Dir),
		otlplog.WithEndpoint(cfg.Endpoint),
		otlplog.WithProtocol(string(cfg.Proto)),
		otlplog.WithServiceName(cfg.Service),
		otlplog.WithBatchSize(cfg.BatchSize))
	if err != nil {
		fmt.Fprintln(os.Stderr, err) // as a program would; the provider works
	}
	logger := zap.New(zaplens.NewCore(zaplens.WithLoggerProvider(p)))
	var stop atomic.Bool
	go func() {
		in := bufio.NewScanner(os.Stdin)
		for in.Scan() {
			if in.Text() == "stop" {
				stop.Store(true)
			}
		}
		os.Exit(3) // stdin closed: the parent is gone
	}()
	fmt.Println("ready")
	var wg sync.WaitGroup
	for g := range cfg.Goroutines {
		wg.Go(func() {
			seq := 0
			for burst := 0; !stop.Load(); burst++ {
				sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tierTraceID(cfg.Service, cfg.Life, g, burst),
					SpanID: trace.SpanID{1, byte(g), byte(burst >> 8), byte(burst)}, TraceFlags: trace.FlagsSampled})
				ctx := trace.ContextWithSpanContext(context.Background(), sc)
				for range cfg.Burst {
					logger.Info("tier line", zaplens.Context(ctx), zap.Int("life", cfg.Life), zap.Int("g", g), zap.Int("seq", seq))
					seq++
					atomic.StoreUint64(&words[progLines+g], uint64(seq))
				}
				time.Sleep(cfg.Pause)
			}
		})
	}
	wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), tierShutdownTimeout)
	err = p.Shutdown(ctx)
	cancel()
	rep := tierChildReport{Stats: p.Stats()}
	for g := range cfg.Goroutines {
		rep.Logged = append(rep.Logged, atomic.LoadUint64(&words[progLines+g]))
	}
	if err != nil {
		rep.ShutdownErr = err.Error()
	}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		rep.CPU = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	b, _ := json.Marshal(rep)
	fmt.Printf("report %s\n", b)
	// -test.cpuprofile's profile (ZAPLENS_TIER_CPUPROFILE) is written
	// when the test ends, which os.Exit skips: stopping it writes it.
	pprof.StopCPUProfile()
	os.Exit(0)
}
