package otlplog

import (
	"strings"
	"testing"
	"time"
)

// A quiet process rides out an outage longer than one attempt's bound at
// the default retry bound: the OTLP timeout bounds each attempt, not the
// retries, so the batch that met the outage waits for the collector
// instead of failing. The attempt bound is scaled down (300 ms for 10 s)
// so that a 3 s outage is to it what 20 s was to the default; the retry
// bound, the backoff and the queue are the defaults. The collector is a
// real OTLP server, stopped and started again on the same port.
func TestQuietProcessRidesOutOutage(t *testing.T) {
	cleanEnv(t)
	srv := startOTLPServer(t, "127.0.0.1:0")
	p := newTestProvider(t, WithEndpoint("http://"+srv.Addr), WithOTLPTimeout(300*time.Millisecond),
		WithScheduleDelay(50*time.Millisecond))
	emit(p, 10)
	for deadline := time.Now().Add(5 * time.Second); p.Stats().Exported != 10; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("before the outage: %v", p.Stats())
		}
	}
	srv.Srv.Stop()
	const outage, perTick = 3 * time.Second, 10 // 100 lines/s
	for end := time.Now().Add(outage); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		emit(p, perTick)
	}
	again := startOTLPServer(t, srv.Addr)
	want := p.Stats().Emitted - 10
	if got := again.WaitRecords(int64(want), 15*time.Second); got != int64(want) {
		t.Errorf("after the outage: %d of %d arrived; stats %v", got, want, p.Stats())
	}
	if err := shutdownWithin(p, 5*time.Second); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	if s := p.Stats(); s.Failed != 0 || s.Dropped != 0 {
		t.Errorf("lost records: %v", s)
	}
}

// Under pressure the oldest records give way: with the collector down and
// the queue full, the batch waiting to retry fails at once, counted, and
// the newest lines are kept and delivered when the collector comes back,
// long before the retry bound.
func TestRetryingBatchGivesWayToNewer(t *testing.T) {
	cleanEnv(t)
	addr := freeAddr(t)
	p := newTestProvider(t, WithEndpoint("http://"+addr), WithQueueBytes(64<<10), WithBatchSize(100),
		WithScheduleDelay(50*time.Millisecond))
	emit(p, 100)                       // one batch, which meets the outage and retries
	time.Sleep(300 * time.Millisecond) // it is taken, and its first attempt refused
	emit(p, 2000)                      // far past 64 KiB: the queue turns records away
	deadline := time.Now().Add(5 * time.Second)
	for p.Stats().Failed == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no batch gave way: %v", p.Stats())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := p.pipe.LastFailure(); err == nil || !strings.Contains(err.Error(), "gave way") {
		t.Errorf("last failure %v, want the give-way told", err)
	}
	srv := startOTLPServer(t, addr)
	if err := shutdownWithin(p, 10*time.Second); err == nil {
		t.Error("Shutdown: no DeliveryError for the records that gave way")
	}
	s := p.Stats()
	if s.Emitted != s.Exported+s.Dropped+s.Failed || s.Queued != 0 || s.Exported == 0 {
		t.Errorf("stats %v do not add up, or nothing was delivered", s)
	}
	if got := srv.Records.Load(); uint64(got) != s.Exported {
		t.Errorf("server holds %d, exported %d", got, s.Exported)
	}
}

// The retry bound comes from its option or variable, and the pipeline's
// export bound defaults to it plus one attempt, so that it cuts no retry
// short; a bad value is warned of and the default kept.
func TestRetryBoundSettings(t *testing.T) {
	for _, tc := range []struct {
		name          string
		env           map[string]string
		opts          []Option
		retry, export time.Duration
	}{
		{"defaults", nil, nil, DefaultRetryMaxElapsed, DefaultRetryMaxElapsed + DefaultOTLPTimeout},
		{"variables", map[string]string{"ZAPLENS_RETRY_MAX_ELAPSED": "5000", "OTEL_EXPORTER_OTLP_TIMEOUT": "2000"}, nil, 5 * time.Second, 7 * time.Second},
		{"option over the variable", map[string]string{"ZAPLENS_RETRY_MAX_ELAPSED": "5000"}, []Option{WithRetryMaxElapsed(time.Second)}, time.Second, time.Second + DefaultOTLPTimeout},
		{"export bound given", nil, []Option{WithExportTimeout(3 * time.Second)}, DefaultRetryMaxElapsed, 3 * time.Second},
		{"bad variable", map[string]string{"ZAPLENS_RETRY_MAX_ELAPSED": "1m"}, nil, DefaultRetryMaxElapsed, DefaultRetryMaxElapsed + DefaultOTLPTimeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			setEnv(t, tc.env)
			c := newProviderConfig(tc.opts)
			if err := c.resolveEnv(); err != nil {
				t.Fatal(err)
			}
			if c.retryElapsed.value != tc.retry || c.exportTimeout.value != tc.export {
				t.Errorf("retry bound %v, export bound %v; want %v, %v", c.retryElapsed.value, c.exportTimeout.value, tc.retry, tc.export)
			}
			if bad := tc.name == "bad variable"; bad != (len(c.warnings) > 0 && strings.Contains(strings.Join(c.warnings, " "), "ZAPLENS_RETRY_MAX_ELAPSED")) {
				t.Errorf("warnings %q", c.warnings)
			}
		})
	}
}
