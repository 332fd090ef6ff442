package zaplens

import (
	"slices"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// bridgeEnv clears the bridge's variables and the memory of what was told,
// and returns the loss output's buffer.
func bridgeEnv(t *testing.T) *lockedBuffer {
	t.Helper()
	for _, k := range []string{EnvLevel, EnvLoggerNames, EnvExcludeLoggerNames, EnvIDFormat, EnvTraceBased, googleProjectEnv} {
		t.Setenv(k, "")
	}
	told.Clear()
	var out lockedBuffer
	t.Cleanup(swapLossOutput(&out))
	return &out
}

// logEachLevel logs one entry per level from Debug to Error through a
// bridge built with opts, under the given logger names, and returns what
// was bridged.
func logEachLevel(t *testing.T, names []string, opts ...Option) []string {
	t.Helper()
	c := newCapture(t)
	root := zap.New(NewCore(append([]Option{WithLoggerProvider(c.lp)}, opts...)...))
	for _, name := range names {
		logger := root
		if name != "" {
			logger = root.Named(name)
		}
		for _, l := range []zapcore.Level{zapcore.DebugLevel, zapcore.InfoLevel, zapcore.WarnLevel, zapcore.ErrorLevel} {
			logger.Log(l, name+" "+l.String())
		}
	}
	return bodies(c)
}

func TestEnvLevel(t *testing.T) {
	for _, tc := range []struct {
		value string
		opts  []Option
		want  []string
	}{
		{"", nil, []string{" info", " warn", " error"}},
		{"debug", nil, []string{" debug", " info", " warn", " error"}},
		{" WARN ", nil, []string{" warn", " error"}},
		{"off", nil, nil},
		{"debug", []Option{WithLevel(zapcore.ErrorLevel)}, []string{" error"}},
		{"debug", []Option{WithRankLevel([]int{0}, zapcore.WarnLevel, Off)}, []string{" warn", " error"}},
	} {
		out := bridgeEnv(t)
		t.Setenv(EnvLevel, tc.value)
		if got := logEachLevel(t, []string{""}, tc.opts...); !slices.Equal(got, tc.want) {
			t.Errorf("%s=%q with %d options: bridged %q, want %q", EnvLevel, tc.value, len(tc.opts), got, tc.want)
		}
		if out.String() != "" {
			t.Errorf("%s=%q: warned %q", EnvLevel, tc.value, out.String())
		}
	}
}

// ZAPLENS_LEVEL sets levels per logger-name prefix as WithLevelFor does;
// WithLevelFor for the same prefix wins, and a bad part, an empty level
// among them, is ignored with a warning, the parts that parse kept.
func TestEnvLevelPerLogger(t *testing.T) {
	names := []string{"", "http", "http.client", "megatron.training"}
	for _, tc := range []struct {
		value string
		opts  []Option
		want  []string
		warn  string
	}{
		{"warn,http=error,megatron.training=debug", nil,
			[]string{" warn", " error", "http error", "http.client error",
				"megatron.training debug", "megatron.training info", "megatron.training warn", "megatron.training error"}, ""},
		{"http=debug", []Option{WithLevelFor("http", zapcore.ErrorLevel)},
			[]string{" info", " warn", " error", "http error", "http.client error",
				"megatron.training info", "megatron.training warn", "megatron.training error"}, ""},
		{"info,http=lod", nil,
			[]string{" info", " warn", " error", "http info", "http warn", "http error", "http.client info", "http.client warn", "http.client error",
				"megatron.training info", "megatron.training warn", "megatron.training error"}, `"http=lod": want debug`},
		{"warn,http=,megatron.training=debug", nil,
			[]string{" warn", " error", "http warn", "http error", "http.client warn", "http.client error",
				"megatron.training debug", "megatron.training info", "megatron.training warn", "megatron.training error"},
			`zaplens: ZAPLENS_LEVEL="warn,http=,megatron.training=debug": "http=": an empty level; want debug, info, warn, error, dpanic, panic, fatal or off; that part ignored, the rest kept`},
		{"warn,megatron.data=loud,megatron.training=debug", nil,
			[]string{" warn", " error", "http warn", "http error", "http.client warn", "http.client error",
				"megatron.training debug", "megatron.training info", "megatron.training warn", "megatron.training error"},
			`"megatron.data=loud": want debug, info, warn, error, dpanic, panic, fatal or off; that part ignored, the rest kept`},
	} {
		out := bridgeEnv(t)
		t.Setenv(EnvLevel, tc.value)
		if got := logEachLevel(t, names, tc.opts...); !slices.Equal(got, tc.want) {
			t.Errorf("%s=%q with %d options: bridged %q, want %q", EnvLevel, tc.value, len(tc.opts), got, tc.want)
		}
		if said := out.String(); tc.warn == "" && said != "" || !strings.Contains(said, tc.warn) {
			t.Errorf("%s=%q: warned %q, want %q", EnvLevel, tc.value, said, tc.warn)
		}
	}
}

func TestEnvLoggerNames(t *testing.T) {
	names := []string{"", "http", "http.client", "db", "httpx"}
	for _, tc := range []struct {
		include, exclude string
		opts             []Option
		want             []string
	}{
		{"http", "", nil, []string{"http info", "http.client info"}},
		{" http , db ", "http.client", nil, []string{"http info", "db info"}},
		{",db", "", nil, []string{" info", "db info"}}, // an empty item is the root logger
		{"", "http,db", nil, []string{" info", "httpx info"}},
		{"http", "", []Option{WithLoggerName("db")}, []string{"db info"}},
		{"", "http", []Option{WithoutLoggerName("db")}, []string{" info", "http info", "http.client info", "httpx info"}},
	} {
		out := bridgeEnv(t)
		t.Setenv(EnvLoggerNames, tc.include)
		t.Setenv(EnvExcludeLoggerNames, tc.exclude)
		got := slices.DeleteFunc(logEachLevel(t, names, tc.opts...), func(s string) bool { return !strings.HasSuffix(s, " info") })
		if !slices.Equal(got, tc.want) {
			t.Errorf("include %q, exclude %q: bridged %q, want %q", tc.include, tc.exclude, got, tc.want)
		}
		if out.String() != "" {
			t.Errorf("include %q, exclude %q: warned %q", tc.include, tc.exclude, out.String())
		}
	}
}

func TestEnvIDFormat(t *testing.T) {
	sampled, _ := spanContext(t)
	for _, tc := range []struct {
		value, project string
		opts           []Option
		want, not      []string
	}{
		{"", "", nil, []string{`"trace_id":"`, `"span_id":"`}, nil},
		{"hex", "", nil, []string{`"trace_id":"`}, nil},
		{"datadog", "", nil, []string{`"dd.trace_id":"`, `"dd.span_id":"`}, []string{`"trace_id"`}},
		{"ECS", "", nil, []string{`"trace.id":"`, `"span.id":"`}, nil},
		{"gcp", "env-project", nil, []string{`"logging.googleapis.com/trace":"projects/env-project/traces/`}, nil},
		{"gcp:My-Project", "env-project", nil, []string{`"logging.googleapis.com/trace":"projects/My-Project/traces/`}, nil},
		{"none", "", nil, nil, []string{"trace", "span"}},
		{"datadog", "", []Option{WithTraceKeys("t", "s")}, []string{`"t":"`, `"s":"`}, []string{"dd."}},
		{"datadog", "", []Option{WithIDFormat(nil)}, nil, []string{"trace", "span"}},
	} {
		out := bridgeEnv(t)
		t.Setenv(EnvIDFormat, tc.value)
		t.Setenv(googleProjectEnv, tc.project)
		base := newJSONBase(zapcore.InfoLevel)
		zap.New(NewTee(base.core, append([]Option{WithLoggerProvider(newCapture(t).lp)}, tc.opts...)...)).Info("m", Context(sampled))
		line := base.buf.String()
		for _, w := range tc.want {
			if !strings.Contains(line, w) {
				t.Errorf("%s=%q: line %s lacks %s", EnvIDFormat, tc.value, line, w)
			}
		}
		for _, w := range tc.not {
			if strings.Contains(line, w) {
				t.Errorf("%s=%q: line %s has %s", EnvIDFormat, tc.value, line, w)
			}
		}
		if out.String() != "" {
			t.Errorf("%s=%q: warned %q", EnvIDFormat, tc.value, out.String())
		}
	}
}

func TestEnvTraceBased(t *testing.T) {
	unsampled, _ := unsampledSpanContext(t)
	for _, tc := range []struct {
		value string
		opts  []Option
		want  []string
	}{
		{"", nil, []string{"info", "warn", "error"}},
		{"warn", nil, []string{"warn", "error"}},
		{"off", nil, nil},
		{"off", []Option{WithTraceBased(zapcore.ErrorLevel)}, []string{"error"}},
	} {
		bridgeEnv(t)
		t.Setenv(EnvTraceBased, tc.value)
		c := newCapture(t)
		logger := zap.New(NewCore(append([]Option{WithLoggerProvider(c.lp)}, tc.opts...)...))
		for _, l := range []zapcore.Level{zapcore.InfoLevel, zapcore.WarnLevel, zapcore.ErrorLevel} {
			logger.Log(l, l.String(), Context(unsampled))
		}
		logger.Info("no span") // never left out
		want := append(slices.Clone(tc.want), "no span")
		if got := bodies(c); !slices.Equal(got, want) {
			t.Errorf("%s=%q: bridged %q, want %q", EnvTraceBased, tc.value, got, want)
		}
	}
}

// A bad value is told once, naming the variable and its value, however
// many cores are built, and the default holds.
func TestEnvBridgeBadValues(t *testing.T) {
	sampled, _ := spanContext(t)
	for _, tc := range []struct {
		key, value string
		want       string
	}{
		{EnvLevel, "loud", `zaplens: ZAPLENS_LEVEL="loud": want debug, info, warn, error, dpanic, panic, fatal or off; ignored, as if not set`},
		{EnvTraceBased, "yes", `zaplens: ZAPLENS_TRACE_BASED="yes": want debug, info, warn, error, dpanic, panic, fatal or off; ignored, as if not set`},
		{EnvIDFormat, "zipkin", `zaplens: ZAPLENS_ID_FORMAT="zipkin": want hex, datadog, ecs, gcp, gcp:PROJECT or none; ignored, as if not set`},
		{EnvIDFormat, "gcp:", `zaplens: ZAPLENS_ID_FORMAT="gcp:": want hex, datadog, ecs, gcp, gcp:PROJECT or none; ignored, as if not set`},
		{EnvIDFormat, "ecs:x", `zaplens: ZAPLENS_ID_FORMAT="ecs:x": want hex`},
		{EnvLoggerNames, "http.", `zaplens: ZAPLENS_LOGGER_NAMES="http.": "http." can match no zap logger name: drop the trailing dot`},
		{EnvExcludeLoggerNames, "db,a*", `zaplens: ZAPLENS_EXCLUDE_LOGGER_NAMES="db,a*": "a*" can match no zap logger name: prefixes match literally`},
	} {
		out := bridgeEnv(t)
		t.Setenv(tc.key, tc.value)
		c := newCapture(t)
		base := newJSONBase(zapcore.DebugLevel)
		for range 3 {
			zap.New(NewTee(base.core, WithLoggerProvider(c.lp))).Named("http").Info("m", Context(sampled))
		}
		got := out.String()
		if !strings.HasPrefix(got, tc.want) || strings.Count(got, "\n") != 1 {
			t.Errorf("%s=%q: told\n%s\nwant one line starting\n%s", tc.key, tc.value, got, tc.want)
		}
		// The default holds: Info bridged from every logger, hex ids printed,
		// nothing left out for its span.
		if n := len(c.records()); n != 3 {
			t.Errorf("%s=%q: bridged %d entries, want 3", tc.key, tc.value, n)
		}
		if !strings.Contains(base.buf.String(), `"trace_id":"`) {
			t.Errorf("%s=%q: the default ids are gone: %s", tc.key, tc.value, base.buf.String())
		}
	}
	// The valid items of a list are kept.
	out := bridgeEnv(t)
	t.Setenv(EnvExcludeLoggerNames, "db,a*")
	if got := logEachLevel(t, []string{"db", "http"}); !slices.Equal(got, []string{"http info", "http warn", "http error"}) {
		t.Errorf("bridged %q: db is not kept out", got)
	}
	if !strings.Contains(out.String(), `"a*"`) {
		t.Errorf("no word of a*: %q", out.String())
	}
}
