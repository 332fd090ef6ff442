package otlpview

import (
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
)

// Line is the record on one line, as a receiver prints it when it arrives:
// its time (UTC), severity, scope, body, attributes and, when it has them,
// trace and span ids:
//
//	2026-01-02T15:04:05.123456Z INFO  trainer.optim      step done  {step=1 loss=1.9173} trace=4bf92f3577b34da6a3ce929d0e0e4736 span=00f067aa0ba902b7
//
// Every attribute is shown, a stack trace as its count of lines; a body or
// value that would break the line, or read ambiguously, is quoted as Go
// quotes strings.
func (l Log) Line() string {
	var b strings.Builder
	b.WriteString(l.Time.UTC().Format("2006-01-02T15:04:05.000000Z"))
	fmt.Fprintf(&b, " %-5s %-18s %s", strings.ToUpper(l.Severity), l.Scope, lineValue(l.Body, false))
	if len(l.Attributes) > 0 {
		b.WriteString("  {")
		for i, kv := range l.Attributes {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(lineAttr(kv))
		}
		b.WriteByte('}')
	}
	if hasID(l.TraceID) {
		b.WriteString(" trace=" + l.TraceID)
	}
	if hasID(l.SpanID) {
		b.WriteString(" span=" + l.SpanID)
	}
	return b.String()
}

// ResourceLine is the record's resource on one line, as a receiver prints
// it above the records of a resource other than the last one's, so that
// processes of one service (the ranks of a job) can be told apart:
//
//	resource {service.name=trainer rank=1 host.name=gpu7 process.pid=4242}
func (l Log) ResourceLine() string {
	parts := make([]string, 0, len(l.Resource))
	for _, kv := range l.Resource {
		parts = append(parts, lineAttr(kv))
	}
	return "resource {" + strings.Join(parts, " ") + "}"
}

// hasID reports whether a hex id is set: not empty, not all zeros.
func hasID(id string) bool { return strings.Trim(id, "0") != "" }

func lineAttr(kv *commonpb.KeyValue) string {
	if strings.HasSuffix(kv.GetKey(), "stacktrace") {
		return quoteIfNeeded(kv.GetKey(), true) + "=" + stackLines(formatValue(kv.GetValue()))
	}
	return quoteIfNeeded(kv.GetKey(), true) + "=" + lineValue(kv.GetValue(), true)
}

// lineValue is formatValue for a line: doubles exact, strings quoted when
// needed (inside braces, also when they hold a space).
func lineValue(v *commonpb.AnyValue, nested bool) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return quoteIfNeeded(x.StringValue, nested)
	case *commonpb.AnyValue_DoubleValue:
		return strconv.FormatFloat(x.DoubleValue, 'g', -1, 64)
	case *commonpb.AnyValue_ArrayValue:
		return joinArray(x.ArrayValue, func(e *commonpb.AnyValue) string { return lineValue(e, true) })
	case *commonpb.AnyValue_KvlistValue:
		return joinKvlist(x.KvlistValue, lineAttr)
	}
	return formatValue(v)
}

// joinArray writes an array as [a,b], each element as value writes it.
func joinArray(a *commonpb.ArrayValue, value func(*commonpb.AnyValue) string) string {
	parts := make([]string, 0, len(a.GetValues()))
	for _, e := range a.GetValues() {
		parts = append(parts, value(e))
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// joinKvlist writes a map as {k=v k=v}, each pair as attr writes it.
func joinKvlist(l *commonpb.KeyValueList, attr func(*commonpb.KeyValue) string) string {
	parts := make([]string, 0, len(l.GetValues()))
	for _, kv := range l.GetValues() {
		parts = append(parts, attr(kv))
	}
	return "{" + strings.Join(parts, " ") + "}"
}

// quoteIfNeeded quotes s when it is empty or holds a character that would
// break the line or its reading: a control or non-printing character, a
// quote, leading or trailing space, or, nested, a space, '=', ',' or a
// bracket.
func quoteIfNeeded(s string, nested bool) string {
	if s == "" {
		if nested {
			return `""`
		}
		return s
	}
	if strings.TrimSpace(s) != s {
		return strconv.Quote(s)
	}
	for _, r := range s {
		if r == '"' || r == '\\' || !unicode.IsPrint(r) ||
			nested && (r == ' ' || r == '=' || r == ',' || strings.ContainsRune("{}[]", r)) {
			return strconv.Quote(s)
		}
	}
	return s
}

// Report prints what arrived, grouped by trace: each span (indented under its
// parent) with its log lines under it, in time order; log lines without a
// trace come last.
func (r *Receiver) Report(w io.Writer) {
	r.mu.Lock()
	defer r.mu.Unlock()

	logs := map[string]map[string][]Log{} // by trace, then by span
	var untraced []Log
	for _, l := range r.logs {
		if !hasID(l.TraceID) {
			untraced = append(untraced, l)
			continue
		}
		if logs[l.TraceID] == nil {
			logs[l.TraceID] = map[string][]Log{}
		}
		logs[l.TraceID][l.SpanID] = append(logs[l.TraceID][l.SpanID], l)
	}
	for _, bySpan := range logs {
		for _, ls := range bySpan {
			sort.SliceStable(ls, func(i, j int) bool { return ls[i].Time.Before(ls[j].Time) })
		}
	}

	spansByTrace := map[string][]Span{}
	for _, s := range r.spans {
		spansByTrace[s.TraceID] = append(spansByTrace[s.TraceID], s)
	}
	// Traces that only logs know of still get a group.
	for tid := range logs {
		if _, ok := spansByTrace[tid]; !ok {
			spansByTrace[tid] = nil
		}
	}
	traceIDs := make([]string, 0, len(spansByTrace))
	first := map[string]time.Time{}
	for tid, ss := range spansByTrace {
		traceIDs = append(traceIDs, tid)
		var t time.Time
		for _, s := range ss {
			if t.IsZero() || s.Start.Before(t) {
				t = s.Start
			}
		}
		for _, ls := range logs[tid] {
			if t.IsZero() || ls[0].Time.Before(t) {
				t = ls[0].Time
			}
		}
		first[tid] = t
	}
	sort.Slice(traceIDs, func(i, j int) bool { return first[traceIDs[i]].Before(first[traceIDs[j]]) })

	fmt.Fprintf(w, "=== the backend received %d spans and %d log records, grouped by trace ===\n", r.nspan, r.nlogs)
	if len(r.spans) < r.nspan || len(r.logs) < r.nlogs {
		fmt.Fprintf(w, "(kept and shown: the last %d spans and %d log records)\n", len(r.spans), len(r.logs))
	}
	for _, tid := range traceIDs {
		ss := spansByTrace[tid]
		fmt.Fprintf(w, "\ntrace %s\n", tid)
		children := map[string][]Span{}
		known := map[string]bool{}
		for _, s := range ss {
			known[s.SpanID] = true
		}
		var roots []Span
		for _, s := range ss {
			if !hasID(s.ParentID) || !known[s.ParentID] {
				roots = append(roots, s)
			} else {
				children[s.ParentID] = append(children[s.ParentID], s)
			}
		}
		byStart := func(s []Span) {
			sort.SliceStable(s, func(i, j int) bool { return s[i].Start.Before(s[j].Start) })
		}
		byStart(roots)
		var printSpan func(s Span, depth int)
		printSpan = func(s Span, depth int) {
			ind := strings.Repeat("  ", depth+1)
			fmt.Fprintf(w, "%sspan %s  %s  %s", ind, s.Name, s.SpanID, s.End.Sub(s.Start).Round(time.Microsecond))
			if len(s.Attributes) > 0 {
				fmt.Fprintf(w, "  {%s}", strings.Join(formatAttrs(s.Attributes), " "))
			}
			fmt.Fprintln(w)
			for _, l := range logs[tid][s.SpanID] {
				printLog(w, ind+"  ", l)
			}
			delete(logs[tid], s.SpanID)
			kids := children[s.SpanID]
			byStart(kids)
			for _, c := range kids {
				printSpan(c, depth+1)
			}
		}
		for _, s := range roots {
			printSpan(s, 0)
		}
		// Log lines whose span never arrived.
		for _, sid := range slices.Sorted(maps.Keys(logs[tid])) {
			fmt.Fprintf(w, "  span %s (not received)\n", sid)
			for _, l := range logs[tid][sid] {
				printLog(w, "    ", l)
			}
		}
	}
	if len(untraced) > 0 {
		fmt.Fprintf(w, "\nno trace\n")
		for _, l := range untraced {
			printLog(w, "    ", l)
		}
	}
}

// printLog prints a record in the report, without its code.* attributes.
func printLog(w io.Writer, ind string, l Log) {
	fmt.Fprintf(w, "%s%-5s %-18s %s", ind, strings.ToUpper(l.Severity), l.Scope, formatValue(l.Body))
	var shown []string
	for _, a := range formatAttrs(l.Attributes) {
		if strings.HasPrefix(a, "code.") {
			continue // caller attributes: there, but noisy here
		}
		shown = append(shown, a)
	}
	if len(shown) > 0 {
		fmt.Fprintf(w, "  {%s}", strings.Join(shown, " "))
	}
	fmt.Fprintln(w)
}

func formatAttrs(kvs []*commonpb.KeyValue) []string {
	out := make([]string, 0, len(kvs))
	for _, kv := range kvs {
		out = append(out, formatAttr(kv))
	}
	return out
}

func formatAttr(kv *commonpb.KeyValue) string {
	v := formatValue(kv.GetValue())
	if strings.HasSuffix(kv.GetKey(), "stacktrace") {
		v = stackLines(v)
	}
	return kv.GetKey() + "=" + v
}

// stackLines stands for a stack trace: "<12 lines>".
func stackLines(v string) string {
	n := strings.Count(strings.TrimSpace(v), "\n") + 1
	return "<" + strconv.Itoa(n) + " lines>"
}

func formatValue(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return strconv.FormatInt(x.IntValue, 10)
	case *commonpb.AnyValue_DoubleValue:
		return strconv.FormatFloat(x.DoubleValue, 'g', 6, 64)
	case *commonpb.AnyValue_BoolValue:
		return strconv.FormatBool(x.BoolValue)
	case *commonpb.AnyValue_BytesValue:
		return hex.EncodeToString(x.BytesValue)
	case *commonpb.AnyValue_ArrayValue:
		return joinArray(x.ArrayValue, formatValue)
	case *commonpb.AnyValue_KvlistValue:
		return joinKvlist(x.KvlistValue, formatAttr)
	}
	return ""
}
