package otlpwire

import (
	"slices"

	"go.opentelemetry.io/otel/attribute"
	"google.golang.org/protobuf/encoding/protowire"
)

// Field numbers of the request and the messages around records.
const (
	reqResourceLogs = 1 // ExportLogsServiceRequest.resource_logs

	rlResource  = 1 // ResourceLogs.resource
	rlScopeLogs = 2
	rlSchemaURL = 3

	resAttributes = 1 // Resource.attributes

	slScope      = 1 // ScopeLogs.scope
	slLogRecords = 2
	slSchemaURL  = 3

	scopeName       = 1 // InstrumentationScope
	scopeVersion    = 2
	scopeAttributes = 3
)

// Resource is the encoded resource of every request a pipeline sends.
type Resource struct {
	field     []byte // ResourceLogs.resource, tag included; nil when empty
	schemaURL string
}

// NewResource encodes a resource once. The SDK sends no resource field for
// one without attributes, and so does this.
func NewResource(attrs []attribute.KeyValue, schemaURL string) Resource {
	r := Resource{schemaURL: schemaURL}
	if len(attrs) > 0 {
		e := encoder{Limits: Limits{ValueLength: -1, CheckUTF8: true}}
		b, start := begin(nil, rlResource)
		for _, kv := range attrs {
			b = e.appendKeyValue(b, resAttributes, kv, -1)
		}
		r.field = end(b, start)
	}
	return r
}

// Scope is an encoded instrumentation scope.
type Scope struct {
	field     []byte // ScopeLogs.scope, tag included; nil for the empty scope
	schemaURL string
}

// NewScope encodes an instrumentation scope once. The SDK sends no scope
// field for the empty scope, and so does this. Its attributes are tidied
// as the SDK's LoggerProvider tidies them: one without a key is left out,
// maps keep the last of a repeated key, and values nested deeper than the
// record's depth limit lose what is past it.
func NewScope(name, version, schemaURL string, attrs []attribute.KeyValue) Scope {
	s := Scope{schemaURL: schemaURL}
	if name == "" && version == "" && schemaURL == "" && len(attrs) == 0 {
		return s
	}
	e := encoder{Limits: Limits{ValueLength: -1, CheckUTF8: true, UniqueMaps: true}}
	b, start := begin(nil, slScope)
	b = appendStringField(b, scopeName, e.valid(name))
	b = appendStringField(b, scopeVersion, e.valid(version))
	for _, kv := range attrs {
		if kv.Key == "" {
			continue
		}
		b = e.appendKeyValue(b, scopeAttributes, kv, attrDepth(kv.Value))
	}
	s.field = end(b, start)
	return s
}

// Overhead is the most bytes a request spends around its records for a
// resource and n scopes: a request of records of those scopes stays under
// a bound if their fields, FieldSize each, fit in what Overhead leaves.
func Overhead(res Resource, scopes ...Scope) int {
	n := 2*FieldSize(len(res.field)+len(res.schemaURL)) + 8
	for _, s := range scopes {
		n += scopeOverhead(s)
	}
	return n
}

// scopeOverhead is the most bytes one scope adds to a request around its
// records: what a request charges the first time it takes a record of that
// scope.
func scopeOverhead(s Scope) int { return FieldSize(len(s.field)+len(s.schemaURL)) + 8 }

// Request writes one ExportLogsServiceRequest: one resource, then scopes,
// each with its records. It keeps the records until Bytes, which writes
// the request in one pass with every length known ahead: a length written
// after its content would move a whole batch, megabytes, to make room.
// Reuse it with Reset: once grown, it allocates nothing.
type Request struct {
	buf     []byte
	res     Resource
	table   []Scope        // the scopes records are of, by number
	scopes  []scopeRecords // those of this request's records, in the order each first came
	records [][]byte
	left    int // bytes the bound leaves for more records

	// Grouping: records came mixed when one came after a record of a scope
	// that first came later than its own; runs then holds each record's
	// place in scopes, for group, and is empty while they come grouped.
	places  []int32 // by scope number: its place in scopes, plus one; 0 for none
	runs    []int32
	grouped [][]byte // group's scratch
}

// scopeRecords is one scope's n records, records[first:first+n] once
// grouped; size is their fields' bytes.
type scopeRecords struct {
	scope          Scope
	number         int
	first, n, size int
}

// Reset starts a request for res, of records of the given scopes, of at
// most maxBytes bytes, keeping the buffers.
func (w *Request) Reset(res Resource, scopes []Scope, maxBytes int) {
	for _, s := range w.scopes {
		w.places[s.number] = 0
	}
	if len(w.places) < len(scopes) {
		w.places = append(w.places, make([]int32, len(scopes)-len(w.places))...)
	}
	clear(w.records)
	w.buf, w.res, w.table, w.scopes, w.records = w.buf[:0], res, scopes, w.scopes[:0], w.records[:0]
	w.left = maxBytes - Overhead(res)
	w.runs = w.runs[:0]
}

// Add adds one record of the k-th of the scopes given to Reset: the content
// of a LogRecord message, as AppendRecord writes it, kept, not copied,
// until the next Reset. It reports false, adding nothing, when the record
// would take the request past its bound, its field and, if it is its
// scope's first, the scope's own bytes; the first record always goes in.
// Records may come with their scopes in any order: Bytes writes them
// grouped, as the SDK does, the scopes in the order each first came, and
// each scope's records in the order they came.
func (w *Request) Add(k int, record []byte) bool {
	p := int(w.places[k]) - 1
	cost := FieldSize(len(record))
	if p < 0 {
		cost += scopeOverhead(w.table[k])
	}
	if cost > w.left && len(w.records) > 0 {
		return false
	}
	w.left -= cost
	if p < 0 {
		p = w.start(k)
	} else if len(w.runs) == 0 && p < len(w.scopes)-1 {
		w.mix()
	}
	if len(w.runs) > 0 {
		w.runs = append(w.runs, int32(p))
	}
	w.records = append(w.records, record)
	s := &w.scopes[p]
	s.n++
	s.size += FieldSize(len(record))
	return true
}

// Len is how many records the request holds.
func (w *Request) Len() int { return len(w.records) }

// start adds the k-th scope to the request's, and returns its place there.
func (w *Request) start(k int) int {
	w.scopes = append(w.scopes, scopeRecords{scope: w.table[k], number: k, first: len(w.records)})
	w.places[k] = int32(len(w.scopes))
	return len(w.scopes) - 1
}

// mix notes that the records came mixed: runs gets the place of the scope
// of each record so far, which came grouped.
func (w *Request) mix() {
	for i, s := range w.scopes {
		for range s.n {
			w.runs = append(w.runs, int32(i))
		}
	}
}

// group orders mixed records by scope, stably: a counting sort, with no map
// and no comparison.
func (w *Request) group() {
	if len(w.runs) == 0 {
		return
	}
	at := 0
	for i := range w.scopes {
		s := &w.scopes[i]
		s.first, at, s.n = at, at+s.n, 0 // n counts them again as they are placed
	}
	w.grouped = slices.Grow(w.grouped[:0], len(w.records))[:len(w.records)]
	for i, r := range w.records {
		s := &w.scopes[w.runs[i]]
		w.grouped[s.first+s.n] = r
		s.n++
	}
	w.records, w.grouped = w.grouped, w.records
	clear(w.grouped) // pins no record
	w.runs = w.runs[:0]
}

// Bytes writes the request and returns its bytes, valid until the next
// Reset.
func (w *Request) Bytes() []byte {
	w.group()
	rl := len(w.res.field) + stringFieldSize(w.res.schemaURL)
	for _, s := range w.scopes {
		rl += FieldSize(s.contentSize())
	}
	w.buf = slices.Grow(w.buf[:0], FieldSize(rl))
	w.buf = appendTag(w.buf, reqResourceLogs, protowire.BytesType)
	w.buf = appendVarint(w.buf, uint64(rl))
	w.buf = append(w.buf, w.res.field...)
	for _, s := range w.scopes {
		w.buf = appendTag(w.buf, rlScopeLogs, protowire.BytesType)
		w.buf = appendVarint(w.buf, uint64(s.contentSize()))
		w.buf = append(w.buf, s.scope.field...)
		for _, r := range w.records[s.first : s.first+s.n] {
			w.buf = appendTag(w.buf, slLogRecords, protowire.BytesType)
			w.buf = appendLenBytes(w.buf, r)
		}
		w.buf = appendStringField(w.buf, slSchemaURL, s.scope.schemaURL)
	}
	w.buf = appendStringField(w.buf, rlSchemaURL, w.res.schemaURL)
	return w.buf
}

// contentSize is the bytes of the ScopeLogs message's content.
func (s scopeRecords) contentSize() int {
	return len(s.scope.field) + s.size + stringFieldSize(s.scope.schemaURL)
}

// stringFieldSize is what appendStringField writes for s: nothing for "".
func stringFieldSize(s string) int {
	if s == "" {
		return 0
	}
	return FieldSize(len(s))
}
