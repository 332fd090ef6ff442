//go:build linux || darwin

package integration

// The fault harness's child (see faultharness_test.go): a re-execution of
// this test binary that logs numbered lines through a spooled
// NewLoggerProvider until the harness kills it, or, as the final child,
// does what the harness writes on its stdin and shuts down cleanly.
//
// What it logged must survive its SIGKILL, so it counts in a file it maps
// (MAP_SHARED): the kernel's page cache outlives the process. Per logging
// goroutine, the number of calls that returned; and, every 10ms, a
// snapshot of its Stats.

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"go.uber.org/zap"

	"github.com/zaplens/zaplens"
	"github.com/zaplens/zaplens/internal/testsupport/childproc"
	"github.com/zaplens/zaplens/otlplog"
)

// Not ZAPLENS_*: TestMain clears those.
const (
	faultChildEnv = "FAULTHARNESS_CHILD" // the child's faultChildConfig, as JSON
	faultSpinEnv  = "FAULTHARNESS_SPIN"  // a busy process beside a starved child
)

// faultChildConfig is what one child does.
type faultChildConfig struct {
	Dir           string // the spool, shared by every child of a run
	Endpoint      string
	Proto         Proto
	Run           int // every line carries it, as "run"
	Goroutines    int // logging goroutines, each with its own "g" and "seq" from 0
	Burst         int // lines per goroutine per burst
	Pause         time.Duration
	Spinners      int // busy goroutines beside the loggers (with GOMAXPROCS=1: starvation)
	ScheduleDelay time.Duration
	BatchSize     int
	Progress      string // the file the child maps
	Driven        bool   // the final child: commands on stdin instead of bursts
}

// The progress file, in native-endian uint64 words.
const (
	progLines        = 0  // [0, 16): calls returned, per goroutine
	progLatest       = 16 // 1 + the stats slot last written in full; 0: none yet
	progUnprotected  = 17 // UnixNano of the first snapshot with Unprotected > 0
	progLongestCall  = 18 // the longest a logging call took, in ns
	progLastReturned = 19 // UnixNano of the latest return of a logging call
	progSlots        = 32 // two slots of progSlotWords
	progSlotWords    = 16
	progWords        = progSlots + 2*progSlotWords
	faultMaxRoutines = 16
)

// faultSnapshot is a child's Stats at a moment.
type faultSnapshot struct {
	At time.Time
	otlplog.Stats
}

func (s *faultSnapshot) words() []uint64 {
	st := s.Stats
	return []uint64{uint64(s.At.UnixNano()), st.Emitted, st.Exported, st.Dropped, st.Failed, st.Queued, st.Cut,
		st.Unprotected, st.Kept, st.Recovered, st.RecoveredExported, st.RecoveredFailed, st.Torn, st.SpoolLost, st.RecoveredLost}
}

func snapshotFrom(w []uint64) faultSnapshot {
	return faultSnapshot{At: time.Unix(0, int64(w[0])), Stats: otlplog.Stats{Emitted: w[1], Exported: w[2], Dropped: w[3], Failed: w[4],
		Queued: w[5], Cut: w[6], Unprotected: w[7], Kept: w[8], Recovered: w[9], RecoveredExported: w[10], RecoveredFailed: w[11], Torn: w[12],
		SpoolLost: w[13], RecoveredLost: w[14]}}
}

// faultProgress is what the parent reads from a dead child's file.
type faultProgress struct {
	Logged        []uint64       // per goroutine: calls that returned
	Snap          *faultSnapshot // the last complete snapshot, if any
	UnprotectedAt time.Time      // zero: never unprotected
	LongestCall   time.Duration  // the longest a logging call took
	LastReturned  time.Time      // when a logging call last returned
}

func readProgress(path string, goroutines int) (faultProgress, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return faultProgress{}, err
	}
	if len(b) < progWords*8 {
		return faultProgress{}, fmt.Errorf("progress file %s: %d bytes", path, len(b))
	}
	w := make([]uint64, progWords)
	for i := range w {
		w[i] = binary.NativeEndian.Uint64(b[8*i:])
	}
	p := faultProgress{Logged: w[progLines : progLines+goroutines]}
	if l := w[progLatest]; l > 0 {
		s := snapshotFrom(w[progSlots+int(l-1)*progSlotWords:])
		p.Snap = &s
	}
	if at := w[progUnprotected]; at != 0 {
		p.UnprotectedAt = time.Unix(0, int64(at))
	}
	p.LongestCall = time.Duration(w[progLongestCall])
	if at := w[progLastReturned]; at != 0 {
		p.LastReturned = time.Unix(0, int64(at))
	}
	return p, nil
}

// faultChildReport is a driven child's answer to shutdown.
type faultChildReport struct {
	Stats       otlplog.Stats
	ShutdownErr string
}

// faultShipReport is a driven child's answer to ship: a ShipSpool on its
// directory, in the same process, after its Shutdown.
type faultShipReport struct {
	Stats otlplog.ShipStats
	Err   string
}

var faultSpinSink atomic.Uint64

func faultSpin() {
	for {
		faultSpinSink.Add(1)
	}
}

// TestFaultHarnessChild is the child's side; it does nothing in a normal run.
func TestFaultHarnessChild(t *testing.T) {
	if os.Getenv(faultSpinEnv) != "" {
		faultSpin()
	}
	var cfg faultChildConfig
	if !childproc.Config(faultChildEnv, &cfg) {
		t.Skip("a child of TestFaultHarness")
	}
	runFaultChild(cfg)
}

func runFaultChild(cfg faultChildConfig) {
	words := mapProgress(cfg.Progress, cfg.Goroutines)
	for range cfg.Spinners {
		go faultSpin()
	}
	p, err := otlplog.NewLoggerProvider(context.Background(),
		otlplog.WithSpool(cfg.Dir),
		otlplog.WithEndpoint(cfg.Endpoint),
		otlplog.WithProtocol(string(cfg.Proto)),
		otlplog.WithServiceName("fault-harness"),
		otlplog.WithScheduleDelay(cfg.ScheduleDelay),
		otlplog.WithBatchSize(cfg.BatchSize),
		otlplog.WithHeaders(map[string]string{faultSenderHeader: faultSender(cfg.Run)}))
	if err != nil {
		fmt.Fprintln(os.Stderr, err) // as a program would; the provider works
	}
	var snapMu sync.Mutex
	slot := 0
	snapshot := func() {
		snapMu.Lock()
		defer snapMu.Unlock()
		s := faultSnapshot{At: time.Now(), Stats: p.Stats()}
		if s.Unprotected > 0 && atomic.LoadUint64(&words[progUnprotected]) == 0 {
			atomic.StoreUint64(&words[progUnprotected], uint64(s.At.UnixNano()))
		}
		for i, v := range s.words() {
			atomic.StoreUint64(&words[progSlots+slot*progSlotWords+i], v)
		}
		atomic.StoreUint64(&words[progLatest], uint64(slot+1))
		slot = 1 - slot
	}
	go func() {
		for range time.Tick(10 * time.Millisecond) {
			snapshot()
		}
	}()
	logger := zap.New(zaplens.NewCore(zaplens.WithLoggerProvider(p)))
	next := make([]int, cfg.Goroutines) // each goroutine's next seq
	logAll := func(n int) {
		var wg sync.WaitGroup
		for g := range cfg.Goroutines {
			wg.Go(func() {
				for range n {
					start := time.Now()
					logger.Info("fault harness line", zap.Int("run", cfg.Run), zap.Int("g", g), zap.Int("seq", next[g]))
					next[g]++
					atomic.StoreUint64(&words[progLines+g], uint64(next[g]))
					noteCall(words, start)
				}
			})
		}
		wg.Wait()
	}
	fmt.Println("ready")
	if !cfg.Driven {
		for {
			logAll(cfg.Burst)
			time.Sleep(cfg.Pause/2 + rand.N(cfg.Pause/2+1))
		}
	}
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		cmd, arg, _ := strings.Cut(in.Text(), " ")
		switch cmd {
		case "log":
			n, _ := strconv.Atoi(arg)
			logAll(n)
			fmt.Println("logged")
		case "recovered":
			// What earlier children left is sent, with the collector up,
			// before the final stage starts: settled for 0.5 s, at most 20 s.
			stable := 0
			for deadline := time.Now().Add(20 * time.Second); stable < 10 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
				if st := p.Stats(); st.Recovered == st.RecoveredExported+st.RecoveredFailed {
					stable++
				} else {
					stable = 0
				}
			}
			fmt.Println("recovered")
		case "flush":
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			err := p.ForceFlush(ctx)
			cancel()
			fmt.Printf("flushed %v\n", err)
		case "shutdown": // [deadline], 20s if none
			d, err := time.ParseDuration(arg)
			if err != nil {
				d = 20 * time.Second
			}
			ctx, cancel := context.WithTimeout(context.Background(), d)
			err = p.Shutdown(ctx)
			cancel()
			rep := faultChildReport{Stats: p.Stats()}
			if err != nil {
				rep.ShutdownErr = err.Error()
				fmt.Fprintln(os.Stderr, err) // as a program would
			}
			snapshot()
			b, _ := json.Marshal(rep)
			fmt.Printf("report %s\n", b)
		case "ship":
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			st, err := otlplog.ShipSpool(ctx, cfg.Dir, otlplog.WithEndpoint(cfg.Endpoint), otlplog.WithProtocol(string(cfg.Proto)),
				otlplog.WithHeaders(map[string]string{faultSenderHeader: faultSender(cfg.Run)}))
			cancel()
			rep := faultShipReport{Stats: st}
			if err != nil {
				rep.Err = err.Error()
			}
			b, _ := json.Marshal(rep)
			fmt.Printf("shipped %s\n", b)
		case "exit":
			os.Exit(0)
		}
	}
	os.Exit(3) // stdin closed: the parent is gone
}

// noteCall records a logging call that started at start and returned now:
// a child whose lines stop coming says whether its calls were stuck.
func noteCall(words []uint64, start time.Time) {
	now := time.Now()
	atomic.StoreUint64(&words[progLastReturned], uint64(now.UnixNano()))
	took := uint64(now.Sub(start))
	for {
		old := atomic.LoadUint64(&words[progLongestCall])
		if took <= old || atomic.CompareAndSwapUint64(&words[progLongestCall], old, took) {
			return
		}
	}
}

// mapProgress maps the progress file, made by the parent, as words, for
// goroutines logging: more than the file counts for end the child.
func mapProgress(path string, goroutines int) []uint64 {
	if goroutines > faultMaxRoutines {
		fmt.Printf("bad config: %d goroutines, the progress file counts %d\n", goroutines, faultMaxRoutines)
		os.Exit(2)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		fmt.Println("progress:", err)
		os.Exit(2)
	}
	mem, err := syscall.Mmap(int(f.Fd()), 0, progWords*8, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		fmt.Println("progress:", err)
		os.Exit(2)
	}
	return unsafe.Slice((*uint64)(unsafe.Pointer(&mem[0])), progWords)
}
