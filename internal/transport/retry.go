package transport

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/zaplens/zaplens/internal/retry"
)

// Retry backoff, as the OTLP exporter spec suggests: exponential with
// jitter, within the retry bound of one Export.
const (
	backoffInitial    = 500 * time.Millisecond
	backoffMax        = 5 * time.Second
	backoffMultiplier = 1.6
	backoffJitter     = 0.2 // ±20%
)

// exportBackoff is the wait between attempts of an export, between a
// failed resolution and the next, and between probes of a replica that is
// down.
var exportBackoff = retry.Backoff{Initial: backoffInitial, Multiplier: backoffMultiplier, Jitter: backoffJitter, Max: backoffMax}

// attempt is the outcome of one request.
type attempt struct {
	err       error         // nil when delivered; sanitized text
	cause     Cause         // classification
	rejected  int64         // records rejected in a partial success
	retryable bool          // a later attempt may succeed
	again     bool          // one retry goes at once, retryable or not: see connFailure
	throttle  time.Duration // delay the collector asked for (RetryInfo, Retry-After)
	status    string        // the answer's status, for Result.Status
}

// bounds are how long an Export may take: each attempt, and the retries
// of the whole, no attempt starting later than elapsed after the first.
type bounds struct{ attempt, elapsed time.Duration }

// run calls try until it delivers, fails for good, gives way, or the time
// runs out: each attempt within b.attempt; no retry once b.elapsed has
// passed since the first, or past ctx's deadline. In Final mode a refused
// connection ends it at once.
// onRetry, when set, hears of each failed attempt that will be retried.
func run(ctx context.Context, b bounds, n int, mode Mode, closed *atomic.Bool, onRetry func(Cause, error), try func(context.Context) attempt) Result {
	urgent, giveWay := urgentFrom(ctx), giveWayFrom(ctx)
	deadline := time.Now().Add(b.elapsed)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	attempts, againUsed := 0, false
	var doubt attempt // a failure no retry would cure, tried once more at once: told if the time runs out on that retry, forgotten after it
	for {
		if closed.Load() {
			return closedResult(n, attempts)
		}
		a, cut := tryWithin(ctx, b.attempt, try)
		attempts++
		if a.err == nil || a.cause == PartialSuccess {
			return Result{Rejected: a.rejected, Err: a.err, Cause: a.cause, Attempts: attempts, Status: a.status}
		}
		if closed.Load() {
			return closedResult(n, attempts)
		}
		if err := ctx.Err(); err != nil {
			if doubt.err != nil {
				return failed(n, attempts, doubt)
			}
			return failed(n, attempts, ctxAttempt(a, err))
		}
		if cut { // the attempt's own bound ran out; a later one may be answered
			if doubt.err != nil {
				return failed(n, attempts, doubt)
			}
			a = ctxAttempt(a, context.DeadlineExceeded)
		}
		doubt = attempt{} // the retry at once came back in time: it speaks for itself
		if a.again && !againUsed {
			againUsed = true
			if !a.retryable {
				doubt = a
			}
			continue
		}
		if !a.retryable || (mode == Final && a.cause == Refused) {
			return failed(n, attempts, a)
		}
		wait := max(exportBackoff.Delay(attempts-1), a.throttle)
		if time.Until(deadline) < wait {
			a.err = errorf(errors.Unwrap(a.err), "%v (no retry: the next one, in %v, would pass the deadline)", a.err, wait.Round(time.Millisecond))
			return failed(n, attempts, a)
		}
		if onRetry != nil {
			onRetry(a.cause, a.err)
		}
		t := time.NewTimer(wait)
		select {
		case <-urgent:
			// A flush waits: try once more now, as a flush would, and do
			// not loop on a refused connection after that.
			t.Stop()
			mode, urgent = Final, nil
			continue
		case <-giveWay:
			t.Stop()
			a.err = errorf(errors.Unwrap(a.err), "%v (no retry: gave way to newer records, the queue was full)", a.err)
			return failed(n, attempts, a)
		case <-ctx.Done():
			t.Stop()
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return failed(n, attempts, a) // ran out while waiting to retry
			}
			return failed(n, attempts, ctxAttempt(a, ctx.Err()))
		case <-t.C:
		}
	}
}

// tryWithin makes one attempt within timeout; cut says the timeout ran
// out (or ctx ended) before it came back.
func tryWithin(ctx context.Context, timeout time.Duration, try func(context.Context) attempt) (a attempt, cut bool) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	a = try(ctx)
	return a, ctx.Err() != nil
}

type urgentKey struct{}

// WithUrgent returns ctx carrying a channel that closes when a flush starts
// waiting for the export: an export between retries then makes its next
// attempt at once, in Final mode. An attempt in flight is never cut short,
// since the collector may already hold its records.
func WithUrgent(ctx context.Context, urgent <-chan struct{}) context.Context {
	return context.WithValue(ctx, urgentKey{}, urgent)
}

func urgentFrom(ctx context.Context) <-chan struct{} {
	ch, _ := ctx.Value(urgentKey{}).(<-chan struct{})
	return ch
}

type giveWayKey struct{}

// WithGiveWay returns ctx carrying a channel that closes when the queue
// behind the export needs its room: an export waiting to retry then fails
// at once, its records the oldest, instead of newer ones being dropped.
// Retrying costs nothing until then. An attempt in flight is never cut
// short.
func WithGiveWay(ctx context.Context, giveWay <-chan struct{}) context.Context {
	return context.WithValue(ctx, giveWayKey{}, giveWay)
}

func giveWayFrom(ctx context.Context) <-chan struct{} {
	ch, _ := ctx.Value(giveWayKey{}).(<-chan struct{})
	return ch
}

// failed is the Result of an export that delivered nothing.
func failed(n, attempts int, a attempt) Result {
	err := a.err
	if attempts > 1 {
		err = &exportError{msg: "after " + strconv.Itoa(attempts) + " attempts: " + err.Error(), sentinel: errors.Unwrap(err)}
	}
	return Result{Rejected: int64(max(n, 0)), Err: err, Cause: a.cause, Attempts: attempts, Status: a.status}
}

// closedResult is the Result of an export on a closed client.
func closedResult(n, attempts int) Result {
	return Result{Rejected: int64(max(n, 0)), Err: ErrClosed, Cause: Other, Attempts: attempts}
}

// ctxAttempt marks a failed attempt as ended by the context: a deadline
// makes a failure a later attempt might have cured a Timeout, a
// cancellation an Other; a refused connection, and any cause no retry would
// change (a TLS or protocol mismatch, credentials, a rejection), stays.
func ctxAttempt(a attempt, ctxErr error) attempt {
	if !a.retryable || a.cause == Refused {
		return a // a cause no later attempt would change: it says more
	}
	if errors.Is(ctxErr, context.DeadlineExceeded) {
		a.cause = Timeout
	} else {
		a.cause = Other
	}
	if e, ok := a.err.(*exportError); ok && e.sentinel == nil {
		a.err = &exportError{msg: e.msg, sentinel: ctxErr}
	}
	return a
}

// maxThrottle caps a delay a collector asks for, so arithmetic cannot
// overflow; any such delay is past every deadline anyway.
const maxThrottle = 24 * time.Hour

// parseRetryAfter reads an HTTP Retry-After value: seconds, or an HTTP date.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if strings.Trim(v, "0123456789") == "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil || s > uint64(maxThrottle/time.Second) {
			return maxThrottle, true // only digits: too many for uint64
		}
		return time.Duration(s) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return min(max(t.Sub(now), 0), maxThrottle), true
	}
	return 0, false
}
