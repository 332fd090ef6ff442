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
// resource and n scopes, so that a batcher can keep a request under a bound
// by adding FieldSize of each record to it.
func Overhead(res Resource, scopes ...Scope) int {
	n := 2*FieldSize(len(res.field)+len(res.schemaURL)) + 8
	for _, s := range scopes {
		n += ScopeOverhead(s)
	}
	return n
}

// ScopeOverhead is the most bytes one scope adds to a request around its
// records: what a batcher charges the first time a request takes a record
// of that scope.
func ScopeOverhead(s Scope) int { return FieldSize(len(s.field)+len(s.schemaURL)) + 8 }

// Request writes one ExportLogsServiceRequest: one resource, then scopes,
// each with its records. It keeps the records until Bytes, which writes
// the request in one pass with every length known ahead: a length written
// after its content would move a whole batch, megabytes, to make room.
// Reuse it with Reset.
type Request struct {
	buf     []byte
	res     Resource
	scopes  []scopeRecords
	records [][]byte
}

// scopeRecords is one scope's run of records: records[first:] up to the
// next run's first; size is their fields' bytes.
type scopeRecords struct {
	scope       Scope
	first, size int
}

// Reset starts a request for res, keeping the buffers.
func (w *Request) Reset(res Resource) {
	clear(w.records)
	w.buf, w.res, w.scopes, w.records = w.buf[:0], res, w.scopes[:0], w.records[:0]
}

// Scope starts the records of s; the records of one scope should be added
// together, as the SDK groups them.
func (w *Request) Scope(s Scope) {
	w.scopes = append(w.scopes, scopeRecords{scope: s, first: len(w.records)})
}

// Add adds one record of the scope last started (the empty scope if none
// was): the content of a LogRecord message, as AppendRecord writes it. It
// is kept, not copied, until the next Reset.
func (w *Request) Add(record []byte) {
	if len(w.scopes) == 0 {
		w.Scope(Scope{})
	}
	w.records = append(w.records, record)
	w.scopes[len(w.scopes)-1].size += FieldSize(len(record))
}

// Bytes writes the request and returns its bytes, valid until the next
// Reset.
func (w *Request) Bytes() []byte {
	rl := len(w.res.field) + stringFieldSize(w.res.schemaURL)
	for _, s := range w.scopes {
		rl += FieldSize(s.contentSize())
	}
	w.buf = slices.Grow(w.buf[:0], FieldSize(rl))
	w.buf = appendTag(w.buf, reqResourceLogs, protowire.BytesType)
	w.buf = appendVarint(w.buf, uint64(rl))
	w.buf = append(w.buf, w.res.field...)
	for i, s := range w.scopes {
		last := len(w.records)
		if i+1 < len(w.scopes) {
			last = w.scopes[i+1].first
		}
		w.buf = appendTag(w.buf, rlScopeLogs, protowire.BytesType)
		w.buf = appendVarint(w.buf, uint64(s.contentSize()))
		w.buf = append(w.buf, s.scope.field...)
		for _, r := range w.records[s.first:last] {
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
