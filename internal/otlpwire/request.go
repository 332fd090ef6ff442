package otlpwire

import (
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
		n += FieldSize(len(s.field)+len(s.schemaURL)) + 8
	}
	return n
}

// Request writes one ExportLogsServiceRequest: one resource, then scopes,
// each with its records. Reuse it with Reset.
type Request struct {
	buf     []byte
	rlStart int
	slStart int
	res     Resource
	scope   Scope
	open    bool // a scope is open
}

// Reset starts a request for res, keeping the buffer.
func (w *Request) Reset(res Resource) {
	w.buf, w.res, w.open = w.buf[:0], res, false
	w.buf, w.rlStart = begin(w.buf, reqResourceLogs)
	w.buf = append(w.buf, res.field...)
}

// Scope starts the records of s; the records of one scope should be added
// together, as the SDK groups them.
func (w *Request) Scope(s Scope) {
	w.closeScope()
	w.buf, w.slStart = begin(w.buf, rlScopeLogs)
	w.buf = append(w.buf, s.field...)
	w.scope, w.open = s, true
}

// Add appends one record: the content of a LogRecord message, as
// AppendRecord writes it.
func (w *Request) Add(record []byte) {
	w.buf = appendTag(w.buf, slLogRecords, protowire.BytesType)
	w.buf = appendLenBytes(w.buf, record)
}

func (w *Request) closeScope() {
	if !w.open {
		return
	}
	w.buf = appendStringField(w.buf, slSchemaURL, w.scope.schemaURL)
	w.buf = end(w.buf, w.slStart)
	w.open = false
}

// Bytes closes the request and returns its bytes, valid until the next
// Reset.
func (w *Request) Bytes() []byte {
	w.closeScope()
	w.buf = appendStringField(w.buf, rlSchemaURL, w.res.schemaURL)
	w.buf = end(w.buf, w.rlStart)
	return w.buf
}
