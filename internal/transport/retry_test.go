package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// The export's backoff is the spec's: from half a second, ×1.6, up to 5 s,
// ±20%.
func TestBackoffDelay(t *testing.T) {
	base := float64(backoffInitial)
	for i := range 12 {
		want := min(base, float64(backoffMax))
		for range 20 {
			d := float64(exportBackoff.Delay(i))
			if d < want*(1-backoffJitter)-1 || d > want*(1+backoffJitter)+1 {
				t.Fatalf("exportBackoff.Delay(%d) = %v, want %v ±20%%", i, time.Duration(d), time.Duration(want))
			}
		}
		base *= backoffMultiplier
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"1", time.Second, true},
		{" 120 ", 2 * time.Minute, true},
		{"0", 0, true},
		{"99999999999999999999", maxThrottle, true},
		{now.Add(3 * time.Second).Format(http.TimeFormat), 3 * time.Second, true},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0, true},
		{"", 0, false},
		{"-1", 0, false},
		{"1.5", 0, false},
		{"soon", 0, false},
	}
	for _, tt := range tests {
		got, ok := parseRetryAfter(tt.in, now)
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseRetryAfter(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

// script is a try function that answers from a list, repeating the last.
func script(calls *atomic.Int32, as ...attempt) func(context.Context) attempt {
	return steps(calls, tries(as...)...)
}

// steps is script for answers that may wait on the attempt's context.
func steps(calls *atomic.Int32, fs ...func(context.Context) attempt) func(context.Context) attempt {
	return func(ctx context.Context) attempt {
		i := int(calls.Add(1)) - 1
		return fs[min(i, len(fs)-1)](ctx)
	}
}

// tries are try functions that answer as.
func tries(as ...attempt) []func(context.Context) attempt {
	fs := make([]func(context.Context) attempt, len(as))
	for i, a := range as {
		fs[i] = func(context.Context) attempt { return a }
	}
	return fs
}

// timedOut is an attempt that waits until its context ends.
func timedOut(ctx context.Context) attempt {
	<-ctx.Done()
	return attempt{cause: Timeout, retryable: true, err: errorf(context.DeadlineExceeded, "deadline")}
}

// cutPreface is a gRPC preface cut short: a TLS server's answer to
// plaintext, or a collector restarting.
func cutPreface() attempt {
	doubtful, _ := classifyConn(nil, `connection error: desc = "error reading server preface: EOF"`, true)
	return doubtful.attempt("grpc", "host:4317", "error reading server preface: EOF")
}

func TestRun(t *testing.T) {
	unavailable := attempt{cause: Unavailable, retryable: true, err: errorf(nil, "busy")}
	refused := attempt{cause: Refused, retryable: true, err: errorf(nil, "refused")}
	rejected := attempt{cause: Rejected, err: errorf(nil, "bad")}
	ok := attempt{cause: Delivered}
	partialOK := attempt{cause: PartialSuccess, rejected: 2, err: errorf(nil, "some")}
	tests := []struct {
		name     string
		mode     Mode
		timeout  time.Duration
		as       []attempt
		cause    Cause
		rejected int64
		attempts int
		maxTook  time.Duration
	}{
		{"delivered", Normal, time.Second, []attempt{ok}, Delivered, 0, 1, 200 * time.Millisecond},
		{"partial is final", Normal, time.Second, []attempt{partialOK, ok}, PartialSuccess, 2, 1, 200 * time.Millisecond},
		{"rejected is not retried", Normal, time.Second, []attempt{rejected, ok}, Rejected, 5, 1, 200 * time.Millisecond},
		{"retry then deliver", Normal, 3 * time.Second, []attempt{unavailable, ok}, Delivered, 0, 2, 1500 * time.Millisecond},
		{"refused retried in Normal", Normal, 3 * time.Second, []attempt{refused, ok}, Delivered, 0, 2, 1500 * time.Millisecond},
		{"refused ends Final", Final, 3 * time.Second, []attempt{refused, ok}, Refused, 5, 1, 200 * time.Millisecond},
		{"unavailable retried in Final", Final, 3 * time.Second, []attempt{unavailable, ok}, Delivered, 0, 2, 1500 * time.Millisecond},
		{"throttle past the deadline", Normal, time.Second, []attempt{{cause: Unavailable, retryable: true, throttle: time.Hour, err: errorf(nil, "later")}}, Unavailable, 5, 1, 200 * time.Millisecond},
		// Waits of 400-600ms, then 640-960ms: always two attempts.
		{"retries run out", Normal, time.Second, []attempt{unavailable}, Unavailable, 5, 2, 1500 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var calls atomic.Int32
			var closed atomic.Bool
			start := time.Now()
			r := run(context.Background(), both(tt.timeout), 5, tt.mode, &closed, nil, script(&calls, tt.as...))
			within(t, "run", time.Since(start), tt.maxTook)
			if r.Cause != tt.cause || r.Rejected != tt.rejected || r.Attempts != tt.attempts {
				t.Errorf("result %+v, want cause %v, rejected %d, %d attempts", r, tt.cause, tt.rejected, tt.attempts)
			}
			if (tt.cause == Delivered) != (r.Err == nil) {
				t.Errorf("err %v", r.Err)
			}
			// A failure after retries says how many attempts it took.
			if r.Err != nil && strings.HasPrefix(r.Err.Error(), "after ") != (r.Attempts > 1) {
				t.Errorf("%d attempts: error %q", r.Attempts, r.Err)
			}
		})
	}
}

func TestRunContext(t *testing.T) {
	t.Parallel()
	var closed atomic.Bool
	ctx, cancel := context.WithCancel(context.Background())
	// Cancelled while waiting to retry.
	go func() { time.Sleep(100 * time.Millisecond); cancel() }()
	var calls atomic.Int32
	r := run(ctx, both(10*time.Second), 3, Normal, &closed, nil, script(&calls, attempt{cause: Unavailable, retryable: true, err: errorf(nil, "busy")}))
	if r.Cause != Other || !errors.Is(r.Err, context.Canceled) || r.Rejected != 3 {
		t.Errorf("canceled: %+v", r)
	}
	// An attempt cut by the deadline is a Timeout.
	r = run(context.Background(), both(100*time.Millisecond), 3, Normal, &closed, nil, func(ctx context.Context) attempt {
		<-ctx.Done()
		return attempt{cause: Unavailable, retryable: true, err: errorf(nil, "cut")}
	})
	if r.Cause != Timeout || !errors.Is(r.Err, context.DeadlineExceeded) {
		t.Errorf("deadline: %+v", r)
	}
	// ... unless it knew better.
	r = run(context.Background(), both(100*time.Millisecond), 3, Normal, &closed, nil, func(ctx context.Context) attempt {
		<-ctx.Done()
		return attempt{cause: Refused, retryable: true, err: errorf(nil, "refused")}
	})
	if r.Cause != Refused {
		t.Errorf("refused at the deadline: %+v", r)
	}
	// A closed client stops the loop.
	closed.Store(true)
	r = run(context.Background(), both(time.Second), 3, Normal, &closed, nil, script(&calls, attempt{cause: Delivered}))
	if !errors.Is(r.Err, ErrClosed) || r.Attempts != 0 || r.Rejected != 3 {
		t.Errorf("closed: %+v", r)
	}
}

// OnRetry hears of each failed attempt that is retried, at once, and not
// of the last one.
func TestOnRetryHearsEachRetriedAttempt(t *testing.T) {
	var closed atomic.Bool
	var calls atomic.Int32
	var heard []Cause
	r := run(context.Background(), both(10*time.Second), 3, Normal, &closed, func(c Cause, err error) {
		if err == nil {
			t.Error("OnRetry without an error")
		}
		heard = append(heard, c)
	}, script(&calls,
		attempt{cause: Unavailable, retryable: true, err: errorf(nil, "busy")},
		attempt{cause: Refused, retryable: true, err: errorf(nil, "refused")},
		attempt{cause: Delivered}))
	if r.Err != nil || len(heard) != 2 || heard[0] != Unavailable || heard[1] != Refused {
		t.Errorf("result %+v, heard %v", r, heard)
	}
}

// A flush that comes while an export waits to retry makes the next attempt
// at once, in Final mode; a refused connection is then not retried again.
func TestUrgentEndsTheWaitOnly(t *testing.T) {
	var closed atomic.Bool
	var calls atomic.Int32
	urgent := make(chan struct{})
	time.AfterFunc(50*time.Millisecond, func() { close(urgent) })
	start := time.Now()
	r := run(WithUrgent(context.Background(), urgent), both(10*time.Second), 3, Normal, &closed, nil, script(&calls,
		attempt{cause: Refused, retryable: true, err: errorf(nil, "refused")},
		attempt{cause: Refused, retryable: true, err: errorf(nil, "refused")},
		attempt{cause: Delivered}))
	if d := time.Since(start); d > 400*time.Millisecond {
		t.Errorf("took %v: the backoff wait was not cut short", d)
	}
	if r.Attempts != 2 || r.Cause != Refused {
		t.Errorf("result %+v: want a second, final attempt and no third", r)
	}
}

// A broken connection is retried once at once, unheard by onRetry; a second
// broken connection waits out the backoff like any unavailable answer.
func TestBrokenConnectionRetriedAtOnce(t *testing.T) {
	broken := attempt{cause: Unavailable, retryable: true, again: true, err: errors.New("broken")}
	mismatch := attempt{cause: ProtocolMismatch, err: errors.New("another protocol")}
	var calls atomic.Int32
	var retries atomic.Int32
	start := time.Now()
	r := run(context.Background(), both(5*time.Second), 10, Normal, new(atomic.Bool),
		func(Cause, error) { retries.Add(1) }, script(&calls, broken, mismatch))
	if took := time.Since(start); r.Cause != ProtocolMismatch || r.Attempts != 2 || took > 100*time.Millisecond || retries.Load() != 0 {
		t.Errorf("broken then mismatch: %+v in %v, %d retries heard", r, took, retries.Load())
	}

	calls.Store(0)
	start = time.Now()
	r = run(context.Background(), both(5*time.Second), 10, Normal, new(atomic.Bool), nil,
		script(&calls, broken, broken, attempt{}))
	if took := time.Since(start); r.Err != nil || r.Attempts != 3 || took < backoffInitial*8/10 {
		t.Errorf("broken twice: %+v in %v, want the second retry after the backoff", r, took)
	}
}

// Errors of a connection that broke under a request are told apart from a
// collector that answered, or none that listens.
func TestBrokenConnection(t *testing.T) {
	for _, err := range []error{net.ErrClosed, syscall.ECONNRESET, syscall.EPIPE, io.EOF, io.ErrUnexpectedEOF,
		&url.Error{Op: "Post", URL: "http://x", Err: fmt.Errorf("write tcp: %w", net.ErrClosed)},
		errors.New("readfrom tcp 127.0.0.1:1->127.0.0.1:2: write tcp: use of closed network connection")} {
		if f, ok := classifyConn(err, err.Error(), true); !ok || !f.again || !f.retryable {
			t.Errorf("%v: %+v, %v; want a broken connection, tried again at once", err, f, ok)
		}
	}
	for _, err := range []error{errors.New("boom"), context.DeadlineExceeded, syscall.ECONNREFUSED} {
		if f, _ := classifyConn(err, err.Error(), true); f.again {
			t.Errorf("%v: a broken connection", err)
		}
	}
}

// A failure no retry would cure, but which a restart gives too (a preface
// cut short), is tried once more at once, unheard by onRetry, and told as
// itself when the retry fails alike or runs out of time; it shares its one
// retry at once with a broken connection.
func TestDoubtfulFailureRetriedOnceAtOnce(t *testing.T) {
	t.Parallel()
	mismatch := cutPreface()
	broken := attempt{cause: Unavailable, retryable: true, again: true, err: errors.New("broken")}
	const (
		atOnce        = iota // the one retry at once, unheard by onRetry
		afterBackoff         // a retry after the backoff, heard
		untilDeadline        // the time ran out
	)
	tests := []struct {
		name     string
		mode     Mode
		as       []func(context.Context) attempt
		cause    Cause
		attempts int
		waited   int
	}{
		{"then delivered", Normal, tries(mismatch, attempt{}), Delivered, 2, atOnce},
		{"then delivered, final", Final, tries(mismatch, attempt{}), Delivered, 2, atOnce},
		{"fails alike", Normal, tries(mismatch, mismatch, attempt{}), TLSMismatch, 2, atOnce},
		{"the retry runs out of time", Normal, append(tries(mismatch), timedOut), TLSMismatch, 2, untilDeadline},
		{"the retry runs out of time, final", Final, append(tries(mismatch), timedOut), TLSMismatch, 2, untilDeadline},
		{"after a broken connection, not tried again", Normal, tries(broken, mismatch, attempt{}), TLSMismatch, 2, atOnce},
		{"then a broken connection waits out the backoff", Normal, tries(mismatch, broken, attempt{}), Delivered, 3, afterBackoff},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var calls, retries atomic.Int32
			start := time.Now()
			r := run(context.Background(), both(time.Second), 4, tt.mode, new(atomic.Bool), func(Cause, error) { retries.Add(1) }, steps(&calls, tt.as...))
			took := time.Since(start)
			if r.Cause != tt.cause || r.Attempts != tt.attempts {
				t.Errorf("result %+v, want cause %v after %d attempts", r, tt.cause, tt.attempts)
			}
			if tt.cause == TLSMismatch && (r.Rejected != 4 || !strings.Contains(r.Err.Error(), "server preface")) {
				t.Errorf("result %+v: want the first failure told", r)
			}
			switch {
			case tt.waited == atOnce && (took > 200*time.Millisecond || retries.Load() != 0):
				t.Errorf("took %v, %d retries heard: want the one retry at once", took, retries.Load())
			case tt.waited == afterBackoff && (took < backoffInitial*8/10 || retries.Load() != 1):
				t.Errorf("took %v, %d retries heard: want one retry after the backoff", took, retries.Load())
			case tt.waited == untilDeadline && (took < 900*time.Millisecond || retries.Load() != 0):
				t.Errorf("took %v, %d retries heard: want the retry at once, then the deadline", took, retries.Load())
			}
		})
	}
}

// The first failure is told for the retry at once only: a later attempt
// that runs out of time, after a backoff, is told as itself, not as the
// TLS mismatch a cut preface first looked like.
func TestDoubtEndsWithItsRetry(t *testing.T) {
	t.Parallel()
	refused := attempt{cause: Refused, retryable: true, err: errors.New("connection refused")}
	var calls atomic.Int32
	r := run(context.Background(), both(3*time.Second), 4, Normal, new(atomic.Bool), nil, steps(&calls, append(tries(cutPreface(), refused), timedOut)...))
	if r.Cause != Timeout || r.Attempts != 3 {
		t.Errorf("result %+v (%v), want a timeout after 3 attempts", r, r.Err)
	}
}

// both bounds each attempt and the retries by d, as one bound did.
func both(d time.Duration) bounds { return bounds{attempt: d, elapsed: d} }

// The timeout bounds each attempt, not the retries: a collector that does
// not answer in time is tried again, within the retry bound, and a later
// answer delivers.
func TestEachAttemptHasItsOwnBound(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	start := time.Now()
	r := run(context.Background(), bounds{attempt: 100 * time.Millisecond, elapsed: 5 * time.Second}, 3, Normal, new(atomic.Bool), nil,
		steps(&calls, timedOut, timedOut, tries(attempt{})[0]))
	if r.Err != nil || r.Attempts != 3 {
		t.Errorf("result %+v, want delivered by the third attempt", r)
	}
	within(t, "run", time.Since(start), 3*time.Second)

	// The retry bound ends it: no attempt starts past it.
	calls.Store(0)
	start = time.Now()
	r = run(context.Background(), bounds{attempt: 100 * time.Millisecond, elapsed: 1500 * time.Millisecond}, 3, Normal, new(atomic.Bool), nil,
		steps(&calls, timedOut))
	if took := time.Since(start); r.Cause != Timeout || r.Attempts < 2 || took > 1700*time.Millisecond {
		t.Errorf("result %+v after %v, want a timeout after some retries, within the retry bound", r, took)
	}
}

// An export waiting to retry gives way at once when the queue behind it
// needs its room, and says so; an attempt in flight is not cut.
func TestGiveWayEndsTheRetries(t *testing.T) {
	t.Parallel()
	giveWay := make(chan struct{})
	time.AfterFunc(50*time.Millisecond, func() { close(giveWay) })
	var calls atomic.Int32
	start := time.Now()
	r := run(WithGiveWay(context.Background(), giveWay), both(10*time.Second), 3, Normal, new(atomic.Bool), nil,
		script(&calls, attempt{cause: Refused, retryable: true, err: errorf(nil, "refused")}, attempt{}))
	if took := time.Since(start); r.Cause != Refused || r.Attempts != 1 || r.Rejected != 3 || took > 400*time.Millisecond {
		t.Errorf("result %+v after %v, want the refused attempt told at once", r, took)
	}
	if !strings.Contains(r.Err.Error(), "gave way") {
		t.Errorf("error %v does not say it gave way", r.Err)
	}

	// Closed during an attempt: the attempt ends as it would.
	calls.Store(0)
	closed := make(chan struct{})
	r = run(WithGiveWay(context.Background(), closed), both(10*time.Second), 3, Normal, new(atomic.Bool), nil,
		steps(&calls, func(context.Context) attempt { close(closed); return attempt{} }))
	if r.Err != nil || r.Attempts != 1 {
		t.Errorf("result %+v, want the attempt in flight delivered", r)
	}
}
