package integration

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/zaplens/zaplens"
	"github.com/zaplens/zaplens/internal/testsupport"
	"github.com/zaplens/zaplens/otlplog"
)

// TestCorrelation: spans from the OTel SDK, several named loggers at several
// levels; every record arrives with its span's ids, its scope, severity,
// body, attributes and the resource; what the level or the name filter
// leaves out never arrives (but still reaches the user's core).
func TestCorrelation(t *testing.T) {
	r := StartReceiver(t)
	p, _ := e2eProvider(t, r, otlplog.WithResourceAttributes(attribute.String("test.case", "correlation")))
	base := &testsupport.LockedBuffer{}
	logger := e2eLogger(p, base, zaplens.WithLevel(zapcore.InfoLevel), zaplens.WithLoggerName("trainer"), zaplens.WithoutLoggerName("trainer.noisy"))

	tp := sdktrace.NewTracerProvider()
	defer func() { _ = tp.Shutdown(context.Background()) }()
	tracer := tp.Tracer("e2e")

	type want struct {
		scope, body, level string
		sev                int32
		span               trace.SpanContext
		attrs              map[string]any
	}
	var wants []want

	ctx, root := tracer.Start(context.Background(), "train")
	data := logger.Named("trainer").Named("data")
	optim := logger.Named("trainer").Named("optim")
	other := logger.Named("eval")                   // outside the prefix
	noisy := logger.Named("trainer").Named("noisy") // excluded
	near := logger.Named("trainerx")                // not a child of "trainer"
	for step := 1; step <= 3; step++ {
		sctx, span := tracer.Start(ctx, "step")
		sc := span.SpanContext()

		data.Debug("prefetch", zaplens.Context(sctx), zap.Int("step", step)) // below the level
		data.Info("batch ready", zaplens.Context(sctx), zap.Int("step", step), zap.String("shard", "s1"))
		wants = append(wants, want{"trainer.data", "batch ready", "info", 9, sc, map[string]any{"step": int64(step), "shard": "s1"}})

		// A context set once with With applies to every later line.
		ol := optim.With(zaplens.Context(sctx), zap.String("run", "r1"))
		ol.Info("step done", zap.Int("step", step), zap.Float64("loss", 0.5/float64(step)))
		wants = append(wants, want{"trainer.optim", "step done", "info", 9, sc, map[string]any{"run": "r1", "step": int64(step), "loss": 0.5 / float64(step)}})
		if step == 2 {
			ol.Warn("grad clipped", zap.Float64("norm", 9.5))
			wants = append(wants, want{"trainer.optim", "grad clipped", "warn", 13, sc, map[string]any{"run": "r1", "norm": 9.5}})
			// The official bridge's way: a context.Context under any key.
			optim.Error("nan loss", zap.Any("ctx", sctx), zap.Int("step", step))
			wants = append(wants, want{"trainer.optim", "nan loss", "error", 17, sc, map[string]any{"step": int64(step)}})
		}
		other.Info("eval skipped", zaplens.Context(sctx))
		noisy.Info("noise", zaplens.Context(sctx))
		near.Info("near miss", zaplens.Context(sctx))
		span.End()
	}
	root.End()
	e2eFlush(t, p)

	recs := r.Records()
	if len(recs) != len(wants) {
		for _, rec := range recs {
			t.Logf("received: %s %q %v", rec.Scope, rec.BodyString, rec.Attrs)
		}
		t.Fatalf("received %d records, want %d", len(recs), len(wants))
	}
	// One export groups records by scope, so match them by body and span.
	byKey := map[string]Record{}
	for _, rec := range recs {
		byKey[rec.BodyString+"/"+rec.SpanID] = rec
	}
	for i, w := range wants {
		got, ok := byKey[w.body+"/"+w.span.SpanID().String()]
		if !ok {
			t.Errorf("record %d (%s in span %s) did not arrive", i, w.body, w.span.SpanID())
			continue
		}
		if got.Scope != w.scope || got.BodyString != w.body || got.Severity != w.sev || !strings.EqualFold(got.SeverityText, w.level) {
			t.Errorf("record %d: scope %q body %q severity %d %q; want %q %q %d %q", i, got.Scope, got.BodyString, got.Severity, got.SeverityText, w.scope, w.body, w.sev, w.level)
		}
		if got.TraceID != w.span.TraceID().String() || got.SpanID != w.span.SpanID().String() {
			t.Errorf("record %d (%s): trace %s span %s; want %s %s", i, w.body, got.TraceID, got.SpanID, w.span.TraceID(), w.span.SpanID())
		}
		for k, v := range w.attrs {
			if got.Attrs[k] != v {
				t.Errorf("record %d (%s): attribute %s = %#v, want %#v (all: %v)", i, w.body, k, got.Attrs[k], v, got.Attrs)
			}
		}
		for k := range got.Attrs {
			if k == "ctx" || strings.Contains(strings.ToLower(fmt.Sprint(got.Attrs[k])), "context.background") {
				t.Errorf("record %d: the context leaked as attribute %s=%v", i, k, got.Attrs[k])
			}
		}
		if got.Resource["service.name"] != "zaplens-e2e" || got.Resource["test.case"] != "correlation" {
			t.Errorf("record %d: resource %v", i, got.Resource)
		}
		if _, ok := got.Attrs["code.line.number"]; !ok {
			t.Errorf("record %d: no caller attributes: %v", i, got.Attrs)
		}
	}

	// The user's own output got every line, filtered ones included, with ids.
	out := base.String()
	for _, s := range []string{`"prefetch"`, `"eval skipped"`, `"noise"`, `"near miss"`, `"nan loss"`} {
		if !strings.Contains(out, s) {
			t.Errorf("base output lacks %s", s)
		}
	}
	// Base prints what it would print alone: zap's caller (e2eLogger adds
	// it) on every line.
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.Contains(line, `"caller":"`) {
			t.Errorf("base line without the caller zap.AddCaller asked for (FINDINGS.md #2): %s", line)
			break
		}
	}
	if strings.Contains(out, "context.Background") || strings.Contains(out, `"ctx"`) {
		t.Errorf("the context leaked into base output:\n%s", out)
	}
	if n := strings.Count(out, `"trace_id":"`+root.SpanContext().TraceID().String()+`"`); n != 3*6+2 {
		t.Errorf("base output: %d lines carry the trace id, want %d:\n%s", n, 3*6+2, out)
	}
}

const e2eFatalChildEnv = "ZAPLENS_E2E_FATAL_CHILD"

// e2eFatalChild runs in the re-executed test binary: it logs through a
// batching provider with an hour-long interval, then calls Fatal.
func e2eFatalChild(url string) {
	p, err := otlplog.NewLoggerProvider(context.Background(),
		otlplog.WithEndpoint(url), otlplog.WithScheduleDelay(time.Hour), otlplog.WithServiceName("fatal-child"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(3)
	}
	logger := e2eLogger(p, os.Stderr)
	tp := sdktrace.NewTracerProvider()
	ctx, span := tp.Tracer("child").Start(context.Background(), "doomed")
	logger.Info("about to fail", zaplens.Context(ctx))
	logger.Fatal("out of memory on rank 3", zaplens.Context(ctx), zap.Int("rank", 3), zap.String("trace", span.SpanContext().TraceID().String()))
	os.Exit(4) // not reached
}

// TestFatal: the child's Fatal line reaches the parent's receiver although
// the provider would only have exported it an hour later.
func TestFatal(t *testing.T) {
	r := StartReceiver(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), e2eFatalChildEnv+"="+r.URL())
	start := time.Now()
	out, err := cmd.CombinedOutput()
	took := time.Since(start)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("child: err %v (want exit status 1 from Fatal); output:\n%s", err, out)
	}
	t.Logf("child exited after %v", took)
	recs := r.Records()
	var fatal *Record
	for i := range recs {
		if recs[i].BodyString == "out of memory on rank 3" {
			fatal = &recs[i]
		}
	}
	if fatal == nil {
		t.Fatalf("the fatal line did not arrive; received %d records; child output:\n%s", len(recs), out)
	}
	if fatal.Severity != 23 || fatal.Attrs["rank"] != int64(3) || fatal.TraceID != fatal.Attrs["trace"] || fatal.Resource["service.name"] != "fatal-child" {
		t.Errorf("fatal record: %+v", *fatal)
	}
	if len(recs) != 2 {
		t.Errorf("received %d records, want 2 (the Info line before is flushed too)", len(recs))
	}
}

// TestSecurity: TLS with a test certificate, a bearer token the receiver
// checks; a wrong token is counted as failed exports, never a crash, and the
// token never shows in what zaplens writes.
func TestSecurity(t *testing.T) {
	r := StartReceiver(t, WithTLS(), WithBearerToken("s3cret-token"))

	t.Run("right token, CA from the environment", func(t *testing.T) {
		t.Setenv("OTEL_EXPORTER_OTLP_CERTIFICATE", r.CAFile())
		t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer%20s3cret-token")
		p, err := otlplog.NewLoggerProvider(context.Background(), otlplog.WithEndpoint(r.URL()), otlplog.WithLossWriter(&testsupport.LockedBuffer{}))
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = p.Shutdown(context.Background()) }()
		logger := e2eLogger(p, &testsupport.LockedBuffer{})
		for i := 0; i < 10; i++ {
			logger.Info("secure line", zap.Int("i", i))
		}
		e2eFlush(t, p)
		if r.Count() != 10 || r.AuthFailures() != 0 {
			t.Fatalf("received %d, auth failures %d; want 10, 0", r.Count(), r.AuthFailures())
		}
	})

	t.Run("wrong token", func(t *testing.T) {
		r.Reset()
		losses := &testsupport.LockedBuffer{}
		p, _ := e2eProvider(t, r,
			otlplog.WithHeaders(map[string]string{"authorization": "Bearer wrong-token-XYZ"}),
			otlplog.WithLossReport(50*time.Millisecond, func(l otlplog.Loss) { fmt.Fprintln(losses, l.String()) }))
		logs := &testsupport.LockedBuffer{}
		logger := e2eLogger(p, logs)
		for i := 0; i < 10; i++ {
			logger.Info("rejected line", zap.Int("i", i))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		ferr := p.ForceFlush(ctx)
		cancel()
		_ = logger.Sync()
		if _, err := e2eShutdown(t, p, 5*time.Second); err != nil {
			t.Logf("Shutdown: %v", err)
		}
		st := p.Stats()
		t.Logf("ForceFlush: %v; stats: %s; auth failures at the receiver: %d", ferr, st, r.AuthFailures())
		if ferr == nil {
			t.Errorf("ForceFlush with a wrong token returned no error")
		}
		if r.Count() != 0 || r.AuthFailures() == 0 {
			t.Errorf("received %d, auth failures %d; want 0, >0", r.Count(), r.AuthFailures())
		}
		if st.Failed != 10 || st.Exported != 0 {
			t.Errorf("stats %s; want 10 failed", st)
		}
		for what, s := range map[string]string{"loss report": losses.String(), "ForceFlush error": fmt.Sprint(ferr), "user log": logs.String()} {
			if strings.Contains(s, "wrong-token-XYZ") {
				t.Errorf("the token appears in the %s: %s", what, s)
			}
		}
		if !strings.Contains(losses.String(), "failed") {
			t.Errorf("no loss report of the failed exports: %q", losses.String())
		}
	})
}
