package zaplens

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// The longest prefix wins, on "." boundaries, over WithLevel; zap's fast
// path lets through what any prefix wants; on both paths.
func TestLevelFor(t *testing.T) {
	for _, p := range bothPaths(t) {
		t.Run(p.name, func(t *testing.T) {
			core := NewCore(WithLoggerProvider(p.provider), WithLevel(zapcore.WarnLevel),
				WithLevelFor("http", zapcore.DebugLevel), WithLevelFor("http.client", zapcore.ErrorLevel),
				WithLevelFor("db", zapcore.InfoLevel), WithLevelFor("db", zapcore.ErrorLevel))
			if got := zapcore.LevelOf(core); got != zapcore.DebugLevel {
				t.Fatalf("Level() = %v, want debug: zap would drop what http wants", got)
			}
			l := zap.New(core)
			l.Info("root info")
			l.Warn("root warn")
			l.Named("http").Debug("http debug")
			l.Named("http").Named("server").Debug("http.server debug")
			l.Named("http").Named("client").Warn("http.client warn")
			l.Named("http").Named("client").Named("pool").Error("http.client.pool error")
			l.Named("httpx").Info("httpx info")
			l.Named("db").Warn("db warn")
			l.Named("db").Error("db error")
			for range 2 { // the second time from the scope cache
				l.Named("http").Debug("cached")
			}
			// Sorted: a zaplens provider groups records by scope.
			want := []string{"cached", "cached", "db error", "http debug", "http.client.pool error", "http.server debug", "root warn"}
			got := gotBodies(p.read(t))
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("bridged %q\nwant    %q", got, want)
			}
		})
	}
}

// A dynamic level under a prefix is asked each time, though the name's
// level is cached; a tee's base keeps its own level.
func TestLevelForDynamic(t *testing.T) {
	c := newCapture(t)
	dyn := zap.NewAtomicLevelAt(zapcore.ErrorLevel)
	base := newJSONBase(zapcore.InfoLevel)
	tee := NewTee(base.core, WithLoggerProvider(c.lp), WithLevelFor("train", dyn))
	l := zap.New(tee).Named("train")
	l.Info("not yet")
	dyn.SetLevel(zapcore.DebugLevel)
	if !tee.Enabled(zapcore.DebugLevel) {
		t.Fatal("the tee is not enabled at debug, which train now wants")
	}
	l.Debug("now")
	l.Info("and now")
	if got, want := len(base.lines(t)), 2; got != want {
		t.Errorf("base printed %d lines, want %d (its own level: info)", got, want)
	}
	var got []string
	for _, r := range c.records() {
		got = append(got, r.Body().AsString())
	}
	if want := []string{"now", "and now"}; !slices.Equal(got, want) {
		t.Errorf("bridged %q, want %q", got, want)
	}
}

// A bad part is told and costs only itself: what parses is kept.
func TestParseLevelSpec(t *testing.T) {
	for _, tc := range []struct {
		spec string
		// what each logger name gets, checked against levels
		want map[string]zapcore.Level
		err  string
	}{
		{spec: "info,http=warn,megatron.training=debug", want: map[string]zapcore.Level{
			"": zapcore.InfoLevel, "x": zapcore.InfoLevel, "http": zapcore.WarnLevel, "http.c": zapcore.WarnLevel,
			"megatron": zapcore.InfoLevel, "megatron.training.loop": zapcore.DebugLevel}},
		{spec: " http = error , warn ", want: map[string]zapcore.Level{"x": zapcore.WarnLevel, "http": zapcore.ErrorLevel}},
		{spec: "debug", want: map[string]zapcore.Level{"a.b": zapcore.DebugLevel}},
		{spec: "a=debug", want: map[string]zapcore.Level{"a": zapcore.DebugLevel, "b": zapcore.InfoLevel}},
		{spec: "", err: "empty part"},
		{spec: "info,,http=warn", err: "empty part", want: map[string]zapcore.Level{"x": zapcore.InfoLevel, "http": zapcore.WarnLevel}},
		{spec: "=warn", err: "empty part"},
		{spec: "infoo", err: "want debug"},
		{spec: "http=loud", err: `"http=loud"`},
		{spec: "error,http=", err: `"http=": an empty level`, want: map[string]zapcore.Level{"x": zapcore.ErrorLevel, "http": zapcore.ErrorLevel}},
		{spec: "warn,trainer.data=loud,db=debug", err: `"trainer.data=loud"`,
			want: map[string]zapcore.Level{"x": zapcore.WarnLevel, "trainer.data": zapcore.WarnLevel, "db": zapcore.DebugLevel}},
		{spec: "info,warn", err: "two levels", want: map[string]zapcore.Level{"x": zapcore.InfoLevel}},
		{spec: "a=info,a=warn", err: `"a" is given twice`, want: map[string]zapcore.Level{"a": zapcore.InfoLevel}},
	} {
		spec, errs := parseLevelSpec(tc.spec)
		err := errors.Join(errs...)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%q: %v", tc.spec, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%q: error %v, want one with %q", tc.spec, err, tc.err)
		}
		cfg := newConfig(spec.options())
		for name, want := range tc.want {
			if got := zapcore.LevelOf(cfg.levelOf(name)); got != want {
				t.Errorf("%q: logger %q gets %v, want %v", tc.spec, name, got, want)
			}
		}
	}
}
