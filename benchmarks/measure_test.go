package benchmarks

import (
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// cpuTime is the user and system CPU time of the whole process so far
// (getrusage RUSAGE_SELF): every goroutine's, so the exporter's and the
// garbage collector's too, and not the receiver's, which is another process.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// heapObjects is the heap occupied by objects, live or not yet swept
// (runtime.MemStats.HeapAlloc), read without stopping the world.
const heapObjects = "/memory/classes/heap/objects:bytes"

// A heapPeak samples the heap every 2 ms from start to stop and keeps the
// highest value above the heap at start, measured after a GC.
type heapPeak struct {
	base, peak uint64
	stopc      chan struct{}
	wg         sync.WaitGroup
}

func startHeapPeak() *heapPeak {
	runtime.GC()
	h := &heapPeak{stopc: make(chan struct{})}
	s := []metrics.Sample{{Name: heapObjects}}
	metrics.Read(s)
	h.base = s[0].Value.Uint64()
	h.peak = h.base
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			h.peak = max(h.peak, s[0].Value.Uint64())
			select {
			case <-h.stopc:
				return
			case <-t.C:
			}
		}
	}()
	return h
}

// stop ends the sampling (with a last sample) and returns the peak above
// the heap at start, in MiB.
func (h *heapPeak) stop() (peakMiB float64) {
	close(h.stopc)
	h.wg.Wait()
	return float64(h.peak-h.base) / (1 << 20)
}

// mallocs is the process's count of heap allocations so far.
func mallocs() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.Mallocs
}

// runqWait is the time the process's threads have spent runnable but
// waiting for a CPU (the second field of /proc/self/task/*/schedstat): how
// much the rest of the machine kept the benchmark off its cores. Zero where
// the kernel does not say.
func runqWait() time.Duration {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return 0
	}
	var sum time.Duration
	for _, t := range tasks {
		_, wait := schedstat("/proc/self/task/" + t.Name() + "/schedstat")
		sum += wait
	}
	return sum
}

// threadSched is the calling thread's time on a CPU and time runnable but
// waiting for one. The caller must hold its thread (runtime.LockOSThread)
// for two readings to be of the same thread.
func threadSched() (onCPU, wait time.Duration) {
	return schedstat("/proc/thread-self/schedstat")
}

// schedstat reads a schedstat file: nanoseconds on a CPU, then runnable
// and waiting. Zeros where the kernel does not say.
func schedstat(path string) (onCPU, wait time.Duration) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, 0
	}
	run, _ := strconv.ParseInt(f[0], 10, 64)
	w, _ := strconv.ParseInt(f[1], 10, 64)
	return time.Duration(run), time.Duration(w)
}
