package zaplens

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// On a provider of the user's own, EventName is the record's event name,
// not an attribute; the entry's wins over With's; base prints it as a
// string under event.name.
func TestEventNameGeneral(t *testing.T) {
	c := newCapture(t)
	base := newJSONBase(zapcore.InfoLevel)
	l := zap.New(NewTee(base.core, WithLoggerProvider(c.lp)))
	l.Info("started", EventName("app.started"), zap.Int("n", 1))
	l.With(EventName("from.with")).Info("with")
	l.With(EventName("from.with"), zap.String("k", "v")).Info("entry wins", EventName("entry"))
	l.Info("invalid", EventName("bad\xffname"))
	l.With(EventName("with\xffname")).Info("invalid, from With") // made valid once, with the logger
	l.Info("none")
	want := []string{"app.started", "from.with", "entry", "bad\uFFFDname", "with\uFFFDname", ""}
	recs := c.records()
	if len(recs) != len(want) {
		t.Fatalf("captured %d records, want %d", len(recs), len(want))
	}
	for i, r := range recs {
		if got := r.EventName(); got != want[i] {
			t.Errorf("record %d: event name %q, want %q", i, got, want[i])
		}
		if _, ok := attrs(r)[eventNameKey]; ok {
			t.Errorf("record %d: event name also an attribute", i)
		}
	}
	lines := base.lines(t)
	for i, w := range []string{"app.started", "from.with", "entry"} {
		if got := lines[i][eventNameKey]; got != w {
			t.Errorf("base line %d: event.name %v, want %q", i, got, w)
		}
	}
	if _, ok := lines[5][eventNameKey]; ok {
		t.Errorf("base line 5 has an event.name: %v", lines[5])
	}
}

// eventFilter is an sdk/log processor that takes only the records of one
// event name, deciding in Enabled. An unset name it takes, as the SDK's
// Processor.Enabled contract asks: a bridge's Check cannot know the name
// an entry will carry.
type eventFilter struct {
	sdklog.Processor
	name string
}

func (f eventFilter) Enabled(_ context.Context, p sdklog.EnabledParameters) bool {
	return p.EventName == f.name || p.EventName == ""
}

func (f eventFilter) OnEmit(ctx context.Context, r *sdklog.Record) error {
	if r.EventName() != f.name {
		return nil // the SDK asks Enabled of every processor; OnEmit runs for all if one said yes
	}
	return f.Processor.OnEmit(ctx, r)
}

// A provider filters on the event name: the bridge asks Enabled with it
// (log.EnabledParameters.EventName), so a record the provider does not
// want is never built.
func TestEventNameEnabled(t *testing.T) {
	c := &capture{}
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(eventFilter{Processor: sdklog.NewSimpleProcessor(c), name: "wanted"}))
	t.Cleanup(func() { _ = lp.Shutdown(context.Background()) })
	var asked []string
	spy := &enabledSpy{LoggerProvider: lp, asked: &asked}
	l := zap.New(NewCore(WithLoggerProvider(spy)))
	l.Info("kept", EventName("wanted"))
	l.Info("dropped", EventName("other"))
	l.Info("dropped too")
	l.With(EventName("wanted")).Info("kept from With")
	recs := c.records()
	if len(recs) != 2 || recs[0].Body().AsString() != "kept" || recs[1].Body().AsString() != "kept from With" {
		t.Fatalf("captured %d records, want the two named wanted", len(recs))
	}
	// Check asks with what it knows (With's name, if any), Write with the
	// entry's.
	if want := []string{"", "wanted", "", "other", "", "", "wanted", "wanted"}; len(asked) != len(want) {
		t.Fatalf("Enabled asked with %q, want %q", asked, want)
	} else {
		for i := range want {
			if asked[i] != want[i] {
				t.Fatalf("Enabled asked with %q, want %q", asked, want)
			}
		}
	}
}

// enabledSpy records the event names Enabled is asked with.
type enabledSpy struct {
	*sdklog.LoggerProvider
	asked *[]string
}

func (s *enabledSpy) Logger(name string, opts ...log.LoggerOption) log.Logger {
	return spyLogger{Logger: s.LoggerProvider.Logger(name, opts...), asked: s.asked}
}

type spyLogger struct {
	log.Logger
	asked *[]string
}

func (l spyLogger) Enabled(ctx context.Context, p log.EnabledParameters) bool {
	*l.asked = append(*l.asked, p.EventName)
	return l.Logger.Enabled(ctx, p)
}

// newFilteredProvider is sdk/log with a processor that takes only the
// records of one event name into c.
func newFilteredProvider(t *testing.T, c *capture, name string) *sdklog.LoggerProvider {
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(eventFilter{Processor: sdklog.NewSimpleProcessor(c), name: name}))
	t.Cleanup(func() { _ = lp.Shutdown(context.Background()) })
	return lp
}
