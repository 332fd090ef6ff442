// Package retry is the one backoff policy of zaplens's retries: the
// transport's between attempts of an export, the shipper's between sends.
package retry

import (
	"math/rand/v2"
	"time"
)

// Backoff is exponential backoff with jitter, as the OTLP exporter spec
// suggests and as grpc-go's backoff.Config spells it: the step starts at
// Initial and grows by Multiplier up to Max; each wait is the step times a
// random factor within ±Jitter, so that processes that failed together do
// not retry together.
type Backoff struct {
	Initial    time.Duration
	Multiplier float64
	Jitter     float64 // a fraction of the step, below 1
	Max        time.Duration
}

// Delay is the wait before retry number i+1: the i-th step, jittered.
func (b Backoff) Delay(i int) time.Duration {
	d := float64(b.Step(i))
	d *= 1 - b.Jitter + 2*b.Jitter*rand.Float64()
	return time.Duration(d)
}

// Step is the i-th step, before jitter: Initial times Multiplier to the
// i-th power, capped at Max. A large i costs no more than the steps to the
// cap.
func (b Backoff) Step(i int) time.Duration {
	d := float64(b.Initial)
	for range i {
		d *= b.Multiplier
		if d >= float64(b.Max) {
			return b.Max
		}
	}
	return time.Duration(d)
}
