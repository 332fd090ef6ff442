package retry

import (
	"testing"
	"time"
)

var policy = Backoff{Initial: 500 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, Max: 5 * time.Second}

// The steps grow by the multiplier from the first to the cap, and stay
// there however many retries came before.
func TestStep(t *testing.T) {
	want := []float64{500, 800, 1280, 2048, 3276.8, 5000, 5000} // ms
	for i, ms := range want {
		w := time.Duration(ms * float64(time.Millisecond))
		if got := policy.Step(i); got < w-1 || got > w+1 { // a nanosecond of rounding
			t.Errorf("Step(%d) = %v, want %v", i, got, w)
		}
	}
	if got := policy.Step(1 << 30); got != policy.Max {
		t.Errorf("Step(1<<30) = %v, want the cap %v", got, policy.Max)
	}
}

// Each wait is within the jitter of its step, and the waits of one step
// differ: processes that failed together spread their retries.
func TestDelayJitter(t *testing.T) {
	for i := range 8 {
		step := float64(policy.Step(i))
		lo, hi := time.Duration(step*(1-policy.Jitter)), time.Duration(step*(1+policy.Jitter))
		seen := map[time.Duration]bool{}
		for range 50 {
			d := policy.Delay(i)
			if d < lo || d > hi {
				t.Fatalf("Delay(%d) = %v, want within [%v, %v]", i, d, lo, hi)
			}
			seen[d] = true
		}
		if len(seen) < 2 {
			t.Errorf("Delay(%d): 50 waits all %v: no jitter", i, policy.Delay(i))
		}
	}
}

// Without jitter a wait is its step.
func TestDelayNoJitter(t *testing.T) {
	b := policy
	b.Jitter = 0
	for i := range 8 {
		if got := b.Delay(i); got != b.Step(i) {
			t.Errorf("Delay(%d) = %v, want the step %v", i, got, b.Step(i))
		}
	}
}
