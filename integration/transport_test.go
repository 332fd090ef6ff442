package integration

// The same scenarios over both OTLP transports, against the Collector's
// receiver with its default limits: a burst in full and in order, gzip,
// TLS with a bearer token, and a collector that comes up after the program.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"

	"github.com/zaplens/zaplens"
	"github.com/zaplens/zaplens/internal/testsupport"
	"github.com/zaplens/zaplens/otlplog"
)

// burstLine is the message of every burst line: long and repetitive, as log
// lines are, so that gzip has something to do.
const burstLine = "train step progress: forward pass done, gradients accumulated, optimizer state unchanged"

// TestTransportBurst: N lines through NewTee from two named loggers, each in
// its own span, over gRPC and HTTP, with and without gzip. All N arrive,
// once each, in logging order within each scope, each with its span's trace
// and span ids; every export came over the chosen transport; gzip cuts the
// bytes on the wire (counted by a TCP proxy) to well under half.
func TestTransportBurst(t *testing.T) {
	const n = 10_000 / raceScale
	wire := map[string]int64{}
	for _, proto := range protos {
		for _, gz := range []bool{false, true} {
			name := proto.Short()
			if gz {
				name += "+gzip"
			}
			t.Run(name, func(t *testing.T) {
				r := StartReceiver(t)
				target := r.Endpoint()
				if proto == HTTP {
					target = r.HTTPEndpoint()
				}
				counter := StartTCPCounter(t, target)
				opts := []otlplog.Option{otlplog.WithEndpoint("http://" + counter.Addr())}
				if gz {
					opts = append(opts, otlplog.WithCompression("gzip"))
				}
				p, _ := e2eProviderOver(t, r, proto, opts...)
				base := &testsupport.LockedBuffer{}
				l := e2eLogger(p, base)

				tp := sdktrace.NewTracerProvider()
				defer func() { _ = tp.Shutdown(context.Background()) }()
				scopes := []string{"burst.train", "burst.data"}
				ctxs := make([]context.Context, len(scopes))
				spans := map[string]trace.SpanContext{}
				loggers := make([]*zap.Logger, len(scopes))
				for i, s := range scopes {
					ctx, span := tp.Tracer("burst").Start(context.Background(), s)
					defer span.End()
					ctxs[i], spans[s] = ctx, span.SpanContext()
					loggers[i] = l.Named("burst").Named(strings.TrimPrefix(s, "burst."))
				}
				for seq := range n {
					i := seq % len(loggers)
					loggers[i].Info(burstLine, zaplens.Context(ctxs[i]), zap.Int("seq", seq), zap.String("phase", "forward"), zap.Float64("loss", 0.25))
				}
				// No flush: the batches and the schedule delay send it all.
				if !r.WaitForCount(t, n, 20*time.Second) {
					t.Fatalf("received %d of %d; stats %s", r.Count(), n, p.Stats())
				}
				testsupport.Eventually(5*time.Second, func() bool { return p.Stats().Queued == 0 })
				st := p.Stats()
				recs := r.Records()
				if len(recs) != n {
					t.Errorf("received %d records, want exactly %d", len(recs), n)
				}
				if got, _ := e2eDistinct(t, recs); got != n {
					t.Errorf("%d distinct lines arrived, want %d", got, n)
				}
				bad := 0
				for _, rec := range recs {
					want, ok := spans[rec.Scope]
					if !ok || rec.TraceID != want.TraceID().String() || rec.SpanID != want.SpanID().String() || rec.BodyString != burstLine {
						if bad < 3 {
							t.Errorf("record of scope %q: trace %s span %s body %q; want the span of its scope", rec.Scope, rec.TraceID, rec.SpanID, rec.BodyString)
						}
						bad++
					}
				}
				if st.Exported != n || st.Lost() != 0 || st.Queued != 0 {
					t.Errorf("stats %s, want all %d exported", st, n)
				}
				for _, c := range r.Calls() {
					if c.Proto != proto {
						t.Fatalf("an export came over %s, want %s (metadata %v)", c.Proto, proto, c.Metadata)
					}
					if proto == HTTP && gz != (c.Metadata["content-encoding"] == "gzip") {
						t.Fatalf("HTTP export with Content-Encoding %q, gzip %v", c.Metadata["content-encoding"], gz)
					}
				}
				if got := strings.Count(base.String(), `"trace_id":"`); got != n {
					t.Errorf("the user's core printed %d lines with a trace id, want %d", got, n)
				}
				wire[name] = counter.BytesUp()
				t.Logf("%d lines in %d exports; %d bytes on the wire (%.0f per line)", n, r.Exports(), wire[name], float64(wire[name])/n)
			})
		}
	}
	for _, proto := range protos {
		plain, gz := wire[proto.Short()], wire[proto.Short()+"+gzip"]
		if plain > 0 && gz > 0 && gz*3 > plain {
			t.Errorf("%s: %d bytes with gzip against %d without: not compressed", proto.Short(), gz, plain)
		}
	}
}

// TestTransportTLSAndBearer: a TLS receiver that checks a bearer token, on
// both transports. The right token delivers everything. A wrong one is
// refused once (a retry would not change the answer), its records are
// counted failed, ForceFlush and Shutdown say it was the credentials, and
// the token appears in no message: errors, loss reports, the user's log.
func TestTransportTLSAndBearer(t *testing.T) {
	const token = "s3cret-Token-42"
	r := StartReceiver(t, WithTLS(), WithBearerToken(token))
	for _, proto := range protos {
		t.Run(proto.Short()+"/right token", func(t *testing.T) {
			r.Reset()
			p, losses := e2eProviderOver(t, r, proto, otlplog.WithHeaders(map[string]string{"authorization": "Bearer " + token}))
			l := e2eLogger(p, e2eDiscard{})
			for i := range 50 {
				l.Info("secure line", zap.Int("seq", i))
			}
			e2eFlush(t, p)
			if r.Count() != 50 || r.AuthFailures() != 0 {
				t.Errorf("received %d, auth failures %d; want 50, 0 (losses %q)", r.Count(), r.AuthFailures(), losses.String())
			}
			for _, c := range r.Calls() {
				if c.Proto != proto {
					t.Errorf("an export came over %s, want %s", c.Proto, proto)
				}
			}
		})
		t.Run(proto.Short()+"/wrong token", func(t *testing.T) {
			r.Reset()
			const wrong = "Wr0ng-T0ken-XYZ"
			reports := &testsupport.LockedBuffer{}
			p, losses := e2eProviderOver(t, r, proto,
				otlplog.WithHeaders(map[string]string{"authorization": "Bearer " + wrong}),
				otlplog.WithLossReport(50*time.Millisecond, func(l otlplog.Loss) { fmt.Fprintln(reports, l.String()) }))
			logs := &testsupport.LockedBuffer{}
			l := e2eLogger(p, logs)
			for i := range 10 {
				l.Info("rejected line", zap.Int("seq", i))
			}
			start := time.Now()
			ferr := p.ForceFlush(context.Background())
			took := time.Since(start)
			_ = l.Sync()
			_, serr := e2eShutdown(t, p, 5*time.Second)
			st := p.Stats()
			t.Logf("ForceFlush (%v): %v", took.Round(time.Millisecond), ferr)
			t.Logf("Shutdown: %v", serr)
			if r.Count() != 0 || r.AuthFailures() != 1 {
				t.Errorf("received %d, auth failures %d; want 0 and exactly 1 (no retry)", r.Count(), r.AuthFailures())
			}
			if st.Failed != 10 || st.Exported != 0 {
				t.Errorf("stats %s; want 10 failed", st)
			}
			want := map[Proto]string{GRPC: "Unauthenticated", HTTP: "401"}[proto]
			if ferr == nil || !strings.Contains(ferr.Error(), want) {
				t.Errorf("ForceFlush error %v, want one that says %s", ferr, want)
			}
			var de *otlplog.DeliveryError
			if !errors.As(serr, &de) || de.Stats.Failed != 10 || !strings.Contains(serr.Error(), want) {
				t.Errorf("Shutdown error %v, want a DeliveryError with 10 failed that says %s", serr, want)
			}
			if !strings.Contains(losses.String(), "credentials") {
				t.Errorf("no warning that names the credentials: %q", losses.String())
			}
			if took > 2*time.Second {
				t.Errorf("ForceFlush took %v: an authentication failure was retried", took)
			}
			for what, s := range map[string]string{"flush error": errString(ferr), "shutdown error": errString(serr),
				"loss writer": losses.String(), "loss report": reports.String(), "user log": logs.String()} {
				for _, secret := range []string{wrong, "Wr0ng", "T0ken", token} {
					if strings.Contains(s, secret) {
						t.Errorf("%q appears in the %s: %s", secret, what, s)
					}
				}
			}
		})
		t.Run(proto.Short()+"/plaintext to TLS", func(t *testing.T) {
			r.Reset()
			p, err := otlplog.NewLoggerProvider(context.Background(),
				otlplog.WithEndpoint("http://"+strings.TrimPrefix(r.URLFor(proto), "https://")),
				otlplog.WithProtocol(string(proto)), otlplog.WithLossWriter(&testsupport.LockedBuffer{}),
				otlplog.WithHeaders(map[string]string{"authorization": "Bearer " + token}))
			if err != nil {
				t.Fatal(err)
			}
			provLog(p, 10)
			ferr := p.ForceFlush(context.Background())
			_, _ = e2eShutdown(t, p, 5*time.Second)
			if st := p.Stats(); r.Count() != 0 || st.Failed != 10 {
				t.Errorf("received %d, stats %s; want 10 failed", r.Count(), st)
			}
			if ferr == nil || !strings.Contains(ferr.Error(), "TLS") || strings.Contains(ferr.Error(), token) {
				t.Errorf("ForceFlush error %v, want one that says TLS and hides the token", ferr)
			}
		})
	}
}

// TestTransportCollectorDownThenUp: the provider starts, the program logs,
// and the collector comes up a second later, within the export timeout.
// Everything logged meanwhile arrives, once, with nothing counted lost, on
// both transports.
func TestTransportCollectorDownThenUp(t *testing.T) {
	t.Parallel() // waits more than it works: overlaps the other parallel scenarios
	for _, proto := range protos {
		t.Run(proto.Short(), func(t *testing.T) {
			t.Parallel()
			r := StartReceiver(t, Stopped())
			p, losses := e2eProviderOver(t, r, proto)
			const n = 3000
			provLog(p, n)
			time.Sleep(time.Second)
			r.Start(t)
			if !r.WaitForCount(t, n, 15*time.Second) {
				t.Fatalf("received %d of %d after the collector came up; stats %s; losses %q", r.Count(), n, p.Stats(), losses.String())
			}
			testsupport.Eventually(5*time.Second, func() bool { return p.Stats().Queued == 0 })
			st := p.Stats()
			if got, _ := e2eDistinct(t, r.Records()); got != n || r.Count() != n {
				t.Errorf("received %d records, %d distinct; want %d once each", r.Count(), got, n)
			}
			if st.Exported != n || st.Lost() != 0 {
				t.Errorf("stats %s, want %d exported", st, n)
			}
			if losses.String() != "" {
				t.Logf("loss writer: %s", losses.String())
			}
		})
	}
}
