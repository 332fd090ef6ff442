package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zaplens/zaplens/internal/otlpview"
)

// TestExample runs the example against its embedded backend and checks both
// halves of its output: the JSON log with trace ids, and the backend's view
// grouped by trace.
func TestExample(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	t.Setenv("OTEL_SERVICE_NAME", "")
	t.Setenv("OTEL_SDK_DISABLED", "")
	t.Setenv("OTEL_LOGS_EXPORTER", "")

	var out bytes.Buffer
	start := time.Now()
	if err := run(context.Background(), &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	took := time.Since(start)
	t.Logf("example took %v", took)
	if took > 20*time.Second {
		t.Errorf("example took %v; it should finish in a few seconds", took)
	}
	text := out.String()
	jsonPart, report, ok := strings.Cut(text, "\nembedded OTLP backend on ")
	if !ok {
		t.Fatalf("no backend report in output:\n%s", text)
	}

	// The JSON log: every line parses; lines logged in a span carry its ids;
	// the Debug lines are there (base logs Debug) and carry ids too.
	lines := jsonLines(t, jsonPart)
	hex32 := regexp.MustCompile(`^[0-9a-f]{32}$`)
	hex16 := regexp.MustCompile(`^[0-9a-f]{16}$`)
	levels := map[string]int{}
	for _, l := range lines {
		levels[l.Level]++
		if l.Ctx != nil {
			t.Errorf("context field leaked into stdout: %+v", l)
		}
		inSpan := strings.HasPrefix(l.Logger, "trainer.")
		if inSpan && (!hex32.MatchString(l.TraceID) || !hex16.MatchString(l.SpanID)) {
			t.Errorf("line without trace ids: %+v", l)
		}
		if !inSpan && l.TraceID != "" {
			t.Errorf("line outside any span has a trace id: %+v", l)
		}
		if l.Level == "error" && l.Stacktrace == "" {
			t.Errorf("error line without a stack: %+v", l)
		}
	}
	if levels["debug"] != len(allDebug()) || levels["warn"] != 1 || levels["error"] != 1 || levels["info"] < 3*steps {
		t.Errorf("levels on stdout: %v", levels)
	}

	// The backend's view: one trace per step, each with its spans and log
	// lines; the Debug lines of the failing step only, held until it
	// failed; the error has its stack.
	if n := strings.Count(report, "\ntrace "); n != steps {
		t.Errorf("report has %d traces, want %d:\n%s", n, steps, report)
	}
	for _, want := range []string{
		"span train_step", "span data.load", "span optim.step", "span checkpoint.save",
		"INFO  trainer.data", "INFO  trainer.optim", "INFO  trainer.checkpoint",
		"WARN  trainer.optim", "gradient norm clipped",
		"ERROR trainer.checkpoint", "checkpoint upload failed", "exception.stacktrace=<",
		"exception.message=upload /ckpt/step-0004.pt: connection reset by peer",
		"\nno trace\n", "training started",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	// The report's traces come in time order, step by step.
	for i, section := range strings.Split(report, "\ntrace ")[1:] {
		want := 0
		if i+1 == steps {
			want = len(stepDebug(steps))
		}
		if got := strings.Count(section, "DEBUG trainer."); got != want {
			t.Errorf("step %d's trace has %d Debug lines in the backend, want %d:\n%s", i+1, got, want, section)
		}
	}
	// Each log line sits under the span it was logged in.
	for _, pair := range [][2]string{
		{"span data.load", "batch ready"},
		{"span optim.step", "step done"},
		{"span checkpoint.save", "checkpoint saved"},
	} {
		re := regexp.MustCompile(regexp.QuoteMeta(pair[0]) + `[^\n]*\n[^\n]*` + regexp.QuoteMeta(pair[1]))
		if got := len(re.FindAllString(report, -1)); got == 0 {
			t.Errorf("%q is not under %q:\n%s", pair[1], pair[0], report)
		}
	}
	if testing.Verbose() {
		t.Logf("output:\n%s", text)
	}
}

// TestExampleWithCollector: with OTEL_EXPORTER_OTLP_ENDPOINT set, the
// example ships logs and spans there (here, a second backend standing in
// for a collector) and starts no backend of its own.
func TestExampleWithCollector(t *testing.T) {
	collector, err := startBackend()
	if err != nil {
		t.Fatal(err)
	}
	defer collector.Stop()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+collector.Addr())
	t.Setenv("OTEL_SERVICE_NAME", "example-under-test")
	t.Setenv("OTEL_SDK_DISABLED", "")
	t.Setenv("OTEL_LOGS_EXPORTER", "")

	var out bytes.Buffer
	if err := run(context.Background(), &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	if strings.Contains(out.String(), "embedded OTLP backend") {
		t.Errorf("started its embedded backend although the endpoint was set")
	}
	if !strings.Contains(out.String(), "sent to the collector at $OTEL_EXPORTER_OTLP_ENDPOINT: emitted") {
		t.Errorf("no summary line:\n%s", out.String())
	}
	logs, spans := collector.Counts()
	// Info and above: 2 untraced + per step batch ready and step done, a
	// checkpoint line every other step, one warning and one error; and
	// the failing step's Debug lines.
	if want := 2 + 2*steps + steps/2 + 2 + len(stepDebug(steps)); logs != want {
		t.Errorf("the collector received %d log records, want %d", logs, want)
	}
	if want := steps * 3; spans < want {
		t.Errorf("the collector received %d spans, want at least %d", spans, want)
	}
	for _, l := range collector.Logs() {
		if l.Service != "example-under-test" {
			t.Errorf("log record with service.name %q, want OTEL_SERVICE_NAME's", l.Service)
			break
		}
	}
	checkShippedInOrder(t, collector.Logs())
	var report bytes.Buffer
	collector.Report(&report)
	if !strings.Contains(report.String(), "span train_step") || !strings.Contains(report.String(), "gradient norm clipped") {
		t.Errorf("the collector's view:\n%s", report.String())
	}
}

// checkShippedInOrder: the failing step's Debug lines arrived before its
// error, in the order logged, each with its own time; no other Debug line
// arrived.
func checkShippedInOrder(t *testing.T, logs []otlpview.Log) {
	t.Helper()
	failing := ""
	for _, l := range logs {
		if strings.EqualFold(l.Severity, "error") {
			failing = l.TraceID
		}
	}
	var debug []string
	var last time.Time
	for _, l := range logs {
		switch {
		case l.TraceID == failing && strings.EqualFold(l.Severity, "error"):
			if want := stepDebug(steps); !slices.Equal(debug, want) {
				t.Errorf("before the error, the failing trace's Debug lines arrived as %q, want %q", debug, want)
			}
			return
		case !strings.EqualFold(l.Severity, "debug"):
		case l.TraceID != failing:
			t.Errorf("a Debug line of a trace that did not fail arrived: %s", l.Line())
		case !l.Time.After(last):
			t.Errorf("Debug line %q arrived with time %v, not after the one before it (%v)", l.Body.GetStringValue(), l.Time, last)
		default:
			debug, last = append(debug, l.Body.GetStringValue()), l.Time
		}
	}
	t.Errorf("no error line arrived")
}

// line is a line of the example's JSON log.
type line struct {
	Level, Logger, Msg string
	TS                 float64 `json:"ts"`
	TraceID            string  `json:"trace_id"`
	SpanID             string  `json:"span_id"`
	Stacktrace         string
	Ctx                any `json:"ctx"`
}

// jsonLines parses the example's JSON log.
func jsonLines(t *testing.T, text string) []line {
	t.Helper()
	var lines []line
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var l line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("stdout line is not JSON: %v: %q", err, sc.Text())
		}
		lines = append(lines, l)
	}
	return lines
}
