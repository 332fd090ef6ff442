package deploy

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// linkPattern is an entry of the Jaeger UI's linkPatterns.
type linkPattern struct {
	Type string `json:"type"`
	Key  any    `json:"key,omitempty"`
	URL  string `json:"url"`
	Text string `json:"text"`
}

// The Jaeger UI's rules for a "traces" link (jaeger-ui's
// src/model/link-patterns.ts and src/utils/link-formatting.ts): the
// parameters a trace link can use, and the formatters.
var (
	jaegerTraceKeys   = []string{"traceID", "traceName", "duration", "startTime", "endTime"}
	jaegerFormatters  = []string{"epoch_micros_to_date_iso", "pad_start", "add"}
	jaegerLinkTypes   = []string{"traces", "attributes", "resource", "events", "tags", "process", "logs"}
	jaegerParamRegexp = regexp.MustCompile(`#\{([^}]+)\}`)
)

// sampleTrace is what the Jaeger UI hands a trace link: ids in hex, times
// in microseconds since the epoch.
type sampleTrace struct {
	traceID            string
	startTime, endTime int64
}

// renderJaegerLink fills a link template the way the Jaeger UI does: each
// #{parameter | formatter args | ...} becomes the parameter's value, run
// through the formatters, URL-encoded (encodeURIComponent) in a URL.
func renderJaegerLink(t *testing.T, template string, tr sampleTrace, encode bool) string {
	t.Helper()
	return jaegerParamRegexp.ReplaceAllStringFunc(template, func(m string) string {
		expr := jaegerParamRegexp.FindStringSubmatch(m)[1]
		parts := strings.Split(expr, "|")
		name := strings.TrimSpace(parts[0])
		var v any
		switch name {
		case "traceID":
			v = tr.traceID
		case "startTime":
			v = tr.startTime
		case "endTime":
			v = tr.endTime
		default:
			t.Fatalf("parameter %q: the sample trace has no value for it", name)
		}
		for _, f := range parts[1:] {
			args := strings.Fields(f)
			switch args[0] {
			case "add":
				n, err := strconv.ParseInt(args[1], 10, 64)
				if err != nil {
					t.Fatalf("add %q: %v", args[1], err)
				}
				v = v.(int64) + n
			case "epoch_micros_to_date_iso":
				v = time.UnixMicro(v.(int64)).UTC().Format("2006-01-02T15:04:05.000Z")
			default:
				t.Fatalf("formatter %q not rendered by this test", args[0])
			}
		}
		s := fmt.Sprint(v)
		if encode {
			s = url.QueryEscape(s) // as encodeURIComponent for these values
		}
		return s
	})
}

// TestJaegerUILinks checks jaeger/ui-config.json: it is the UI's JSON, its
// trace links use only what the UI gives a trace link, and, rendered for a
// trace, one opens vmui on that trace's lines and one Kibana's Discover.
func TestJaegerUILinks(t *testing.T) {
	raw, err := os.ReadFile("jaeger/ui-config.json")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		LinkPatterns []linkPattern `json:"linkPatterns"`
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		t.Fatalf("jaeger/ui-config.json: %v", err)
	}

	tr := sampleTrace{
		traceID:   "4bf92f3577b34da6a3ce929d0e0e4736",
		startTime: time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC).UnixMicro(),
		endTime:   time.Date(2026, 3, 4, 10, 0, 7, 0, time.UTC).UnixMicro(),
	}
	var vmui, kibana int
	for i, p := range cfg.LinkPatterns {
		if !slices.Contains(jaegerLinkTypes, p.Type) {
			t.Errorf("linkPatterns[%d]: type %q is not one the Jaeger UI knows", i, p.Type)
		}
		if p.Type != "traces" {
			continue
		}
		for _, tmpl := range []string{p.URL, p.Text} {
			for _, m := range jaegerParamRegexp.FindAllStringSubmatch(tmpl, -1) {
				parts := strings.Split(m[1], "|")
				if name := strings.TrimSpace(parts[0]); !slices.Contains(jaegerTraceKeys, name) {
					// The UI leaves the whole link out when a parameter is unknown.
					t.Errorf("linkPatterns[%d]: #{%s}: a trace link has no parameter %q", i, m[1], name)
				}
				for _, f := range parts[1:] {
					if fn := strings.Fields(f); len(fn) == 0 || !slices.Contains(jaegerFormatters, fn[0]) {
						t.Errorf("linkPatterns[%d]: #{%s}: unknown formatter %q", i, m[1], f)
					}
				}
			}
		}
		link := renderJaegerLink(t, p.URL, tr, true)
		u, err := url.Parse(link)
		if err != nil {
			t.Fatalf("linkPatterns[%d] renders to %q: %v", i, link, err)
		}
		switch {
		case strings.HasSuffix(u.Path, "/select/vmui/"):
			vmui++
			// vmui reads its state from the fragment: #/?query=...&g0....
			q, err := url.ParseQuery(strings.TrimPrefix(u.Fragment, "/?"))
			if err != nil {
				t.Fatalf("vmui link fragment %q: %v", u.Fragment, err)
			}
			if got, want := q.Get("query"), "trace_id:="+tr.traceID; got != want {
				t.Errorf("vmui link query %q; want %q", got, want)
			}
			end, err := time.Parse(time.RFC3339, q.Get("g0.end_input"))
			if err != nil {
				t.Fatalf("vmui link end %q: %v", q.Get("g0.end_input"), err)
			}
			if end.Before(time.UnixMicro(tr.endTime)) || q.Get("g0.relative_time") != "none" || q.Get("g0.range_input") == "" {
				t.Errorf("vmui link's time range (%v) does not hold the trace", q)
			}
		case u.Path == "/app/discover":
			kibana++
			frag, err := url.PathUnescape(u.Fragment)
			if err != nil {
				t.Fatal(err)
			}
			if want := `query:(language:kuery,query:'trace_id:"` + tr.traceID + `"')`; !strings.Contains(frag, want) {
				t.Errorf("Kibana link %q lacks the KQL %s", frag, want)
			}
			from := time.UnixMicro(tr.startTime).Add(-5 * time.Minute).UTC().Format("2006-01-02T15:04:05.000Z")
			if !strings.Contains(frag, "from:'"+from+"'") {
				t.Errorf("Kibana link %q does not start 5 minutes before the trace (%s)", frag, from)
			}
		default:
			t.Errorf("linkPatterns[%d] links to %s, neither vmui nor Kibana", i, link)
		}
	}
	if vmui != 1 || kibana != 1 {
		t.Errorf("trace links: %d to vmui, %d to Kibana; want one of each", vmui, kibana)
	}
}
