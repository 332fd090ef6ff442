package testsupport

import (
	"sync/atomic"
	"testing"
	"time"
)

// Eventually waits for a condition that comes to hold, and gives up, at
// its bound, on one that never does.
func TestEventually(t *testing.T) {
	var calls atomic.Int32
	start := time.Now()
	if !Eventually(time.Second, func() bool { return calls.Add(1) == 3 }) || time.Since(start) > 500*time.Millisecond {
		t.Fatalf("a condition true at the third look: %d looks in %v", calls.Load(), time.Since(start))
	}
	start = time.Now()
	if Eventually(50*time.Millisecond, func() bool { return false }) || time.Since(start) < 50*time.Millisecond {
		t.Fatalf("a condition never true: gave up after %v", time.Since(start))
	}
}
