package zaplens

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/zaplens/zaplens/otlplog"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	"go.uber.org/multierr"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"google.golang.org/protobuf/encoding/prototext"

	"github.com/zaplens/zaplens/internal/zapfield"
	"github.com/zaplens/zaplens/internal/zapfield/fieldtest"
)

// verboseError prints more with %+v than Error says, as errors with a
// stack do: zap sends it as "<key>Verbose".
type verboseError struct{ msg, more string }

func (e verboseError) Error() string { return e.msg }
func (e verboseError) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('+') {
		fmt.Fprintf(f, "%s\n%s", e.msg, e.more)
		return
	}
	fmt.Fprint(f, e.msg)
}

// Every way a value leaves through the bridge keeps a redacted key's
// secret in: the direct way and the general one, core and tee, With,
// records other code emits, span events and the exception event, zap's
// "<key>Verbose" and "<key>Causes" of a redacted error key, and values past
// the depth bound, kept as JSON text. The negative control: the baggage, an
// exception's message and With's fields, redacted before, stay so.
func TestRedactEveryWayOut(t *testing.T) {
	cleanEnv(t)
	srv := startOTLPServer(t, "127.0.0.1:0", keepRecords())
	p := newTestProvider(t, otlplog.WithEndpoint("http://"+srv.Addr), otlplog.WithScheduleDelay(time.Hour),
		otlplog.WithRedactKeys("token", "exception.message", "tenant"))
	// With span events an entry takes the general way; without, the direct one.
	plain := []Option{WithLoggerProvider(p), WithLevel(zapcore.DebugLevel), WithBaggage()}
	spans := append([]Option{WithSpanEvents(zapcore.DebugLevel), WithSpanStatus(zapcore.ErrorLevel)}, plain...)
	base := newJSONBase(zapcore.DebugLevel)
	records := 0
	span := recordedSpan(t, func(ctx context.Context) {
		ctx = withTestBaggage(t, ctx, "tenant", "s3cret-baggage")
		for _, l := range []*zap.Logger{zap.New(NewCore(spans...)), zap.New(NewTee(base.core, spans...)),
			zap.New(NewCore(plain...)), zap.New(NewTee(base.core, plain...))} {
			l = l.With(Context(ctx))
			l.Info("direct", zap.String("token", "s3cret-direct"), zap.Int("n", 1))
			l.Info("general", zap.Namespace("ns"), zap.String("Token", "s3cret-general"))
			l.Info("named", zap.NamedError("token", verboseError{"s3cret-named", "s3cret-verbose"}),
				zap.NamedError("Token", multierr.Combine(errors.New("s3cret-cause1"), errors.New("s3cret-cause2"))))
			l.With(zap.NamedError("token", verboseError{"s3cret-with", "s3cret-with-verbose"}), zap.String("token", "s3cret-with-field")).
				Info("with")
			l.Info("deep", zap.Any("any", fieldtest.DeepMap(40, "s3cret-deep-any")), zap.Object("obj", fieldtest.DeepObject{N: 40, Secret: "s3cret-deep-object"}),
				zap.Array("arr", fieldtest.DeepArray{N: 40, Secret: "s3cret-deep-array"}), zap.Any("json", fieldtest.DeepJSON{N: 40, Secret: "s3cret-deep-json"}))
			l.Error("failed", zap.Error(verboseError{"s3cret-exception", "s3cret-exception-verbose"}))
			records += 6
		}
		var r log.Record
		r.SetBody(attribute.MapValue(attribute.String("token", "s3cret-emit-body")))
		r.AddAttributes(attribute.String("TOKEN", "s3cret-emit"))
		p.Logger("other.code").Emit(ctx, r)
		records++
	})
	sent := sentText(t, p, srv, records)
	leaks(t, "records sent", sent)
	// Per bridge (two with span events, two without): token, ns, token, tokenVerbose, Token, TokenCauses, the
	// With's token and tokenVerbose, exception.message, errorVerbose, and
	// tenant on each of its 6 records; then the emitted record's two; and
	// inside the JSON text of the four deep values of each bridge.
	if got, want := strings.Count(sent, `"[redacted]"`), 4*(10+6)+2; got != want {
		t.Errorf("%d values sent as [redacted], want %d", got, want)
	}
	if got, want := strings.Count(sent, `\"[redacted]\"`), 4*4; got != want {
		t.Errorf("%d values sent as [redacted] inside JSON text, want %d", got, want)
	}
	evs := span.Events()
	if len(evs) != 2*7 {
		t.Fatalf("%d span events, want %d", len(evs), 2*7)
	}
	for _, ev := range evs {
		leaks(t, "span event "+ev.Name, fmt.Sprint(ev.Attributes))
	}
	leaks(t, "span status", span.Status().Description)
	if x := eventAttrs(evs[6]); evs[6].Name != "exception" || x[zapfield.KeyExceptionMessage] != "[redacted]" || x[zapfield.KeyExceptionType] == "" {
		t.Errorf("the exception event: %s %v", evs[6].Name, x)
	}
}

// leaks fails t for each secret in what went out by way.
func leaks(t *testing.T, way, out string) {
	t.Helper()
	for rest := out; ; {
		i := strings.Index(rest, "s3cret")
		if i < 0 {
			return
		}
		end := min(len(rest), i+32)
		t.Errorf("%s: a secret leaves: %q", way, rest[i:end])
		rest = rest[i+6:]
	}
}

// globalChildEnv marks the child TestRedactGlobalSetLater runs in.
const globalChildEnv = "ZAPLENS_REDACT_GLOBAL_CHILD"

// A core built on the global provider before the program sets it, as
// otel.GetLoggerProvider documents ("updated in place"), redacts what it
// sends around the provider's encoder as a core given the provider does:
// span events, and values past the depth bound, which become JSON text.
// Setting the global provider is for the whole process, so the test runs
// in a child of its own.
func TestRedactGlobalSetLater(t *testing.T) {
	if os.Getenv(globalChildEnv) == "" {
		cmd := childCommand("TestRedactGlobalSetLater", globalChildEnv+"=1")
		cmd.Args = append(cmd.Args, "-test.v")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestRedactGlobalSetLater") {
			t.Fatalf("child: %v\n%s", err, out)
		}
		return
	}
	srv := startOTLPServer(t, "127.0.0.1:0", keepRecords())
	p := newTestProvider(t, otlplog.WithEndpoint("http://"+srv.Addr), otlplog.WithScheduleDelay(time.Hour), otlplog.WithRedactKeys("token"))
	l := zap.New(NewCore(WithSpanEvents(zapcore.InfoLevel))) // on the global provider, not yet set
	otel.SetLoggerProvider(p)
	span := recordedSpan(t, func(ctx context.Context) {
		l.Info("deep", Context(ctx), zap.String("token", "s3cret-event"), zap.Object("obj", fieldtest.DeepObject{N: 40, Secret: "s3cret-deep"}))
	})
	sent := sentText(t, p, srv, 1)
	leaks(t, "records sent", sent)
	for _, ev := range span.Events() {
		leaks(t, "span event "+ev.Name, fmt.Sprint(ev.Attributes))
	}
}

// failingObject adds a secret, then fails with it in its error's text.
type failingObject struct{ secret string }

func (o failingObject) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	enc.AddString("part", o.secret)
	return errors.New("cannot marshal " + o.secret)
}

// panickingStringer panics with its secret.
type panickingStringer struct{ secret string }

func (s panickingStringer) String() string { panic(s.secret) }

// The text zap puts under "<key>Error" when a redacted key's marshaler
// fails or its Stringer panics is the field's own, and is redacted with
// it, on both ways.
func TestRedactKeyError(t *testing.T) {
	cleanEnv(t)
	srv := startOTLPServer(t, "127.0.0.1:0", keepRecords())
	p := newTestProvider(t, otlplog.WithEndpoint("http://"+srv.Addr), otlplog.WithScheduleDelay(time.Hour), otlplog.WithRedactKeys("token"))
	l := zap.New(NewCore(WithLoggerProvider(p)))
	l.Info("direct", zap.Stringer("token", panickingStringer{"s3cret-stringer"}))
	l.Info("general", zap.Object("token", failingObject{"s3cret-object"}))
	l.Info("general", zap.Namespace("ns"), zap.Stringer("Token", panickingStringer{"s3cret-nested"}))
	sent := sentText(t, p, srv, 3)
	leaks(t, "records sent", sent)
	for _, k := range []string{`"tokenError"`, `"TokenError"`} {
		if !strings.Contains(sent, k) {
			t.Errorf("no %s sent", k)
		}
	}
}

// sentText flushes p and returns, as text, all that srv received, failing
// the test unless that is want records.
func sentText(t *testing.T, p *otlplog.LoggerProvider, srv *otlpServer, want int) string {
	t.Helper()
	if err := p.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := srv.Records.Load(); n != int64(want) {
		t.Fatalf("the receiver holds %d records, want %d", n, want)
	}
	var sent strings.Builder
	for _, rl := range srv.Resources() {
		sent.WriteString(prototext.Format(rl))
	}
	return sent.String()
}
